/**
 * ObjectSearchFilter (docs/api.md §7) in the Conjure union encoding:
 * `{"type": "<variant>", "<variant>": { ...payload }}`.
 */
import type { GeoPoint } from '../geo/geo';

export type PropertyValue = string | number | boolean | { lat: number; lon: number };

export interface FilterPayloads {
  and: { filters: ObjectSearchFilter[] };
  or: { filters: ObjectSearchFilter[] };
  not: { filter: ObjectSearchFilter };
  all: Record<string, never>;
  objectType: { types: string[] };
  environment: { environmentIds: string[] };
  objectId: { ids: string[] };
  tag: { tags: string[]; match?: 'ANY' | 'ALL' };
  propertyExists: { propertyId: string };
  propertyEquals: { propertyId: string; value: PropertyValue };
  propertyIn: { propertyId: string; values: PropertyValue[] };
  propertyRange: { propertyId: string; gt?: PropertyValue; gte?: PropertyValue; lt?: PropertyValue; lte?: PropertyValue };
  propertyPrefix: { propertyId: string; prefix: string; caseInsensitive?: boolean };
  propertyText: { propertyId?: string; query: string; match?: 'ALL_TERMS' | 'ANY_TERM' | 'PHRASE' };
  propertyOrigin: { origin: string; propertyId?: string };
  hasLink: { linkId: string; targetIds?: string[] };
  linkedFrom: { linkId: string; source: ObjectSearchFilter };
  linksTo: { linkId: string; target: ObjectSearchFilter };
  firstSighting: { start?: string; end?: string };
  lastSighting: { start?: string; end?: string };
  sightedDuring: { start: string; end: string };
  geoWithinDistance: { propertyId: string; center: GeoPoint; meters: number };
  geoWithinBox: { propertyId: string; southWest: GeoPoint; northEast: GeoPoint };
  geoWithinPolygon: { propertyId: string; points: GeoPoint[] };
}

export type FilterType = keyof FilterPayloads;

export type FilterOf<T extends FilterType> = { type: T } & { [K in T]: FilterPayloads[T] };

export type ObjectSearchFilter = { [T in FilterType]: FilterOf<T> }[FilterType];

export const FILTER_TYPES: readonly FilterType[] = [
  'and',
  'or',
  'not',
  'all',
  'objectType',
  'environment',
  'objectId',
  'tag',
  'propertyExists',
  'propertyEquals',
  'propertyIn',
  'propertyRange',
  'propertyPrefix',
  'propertyText',
  'propertyOrigin',
  'hasLink',
  'linkedFrom',
  'linksTo',
  'firstSighting',
  'lastSighting',
  'sightedDuring',
  'geoWithinDistance',
  'geoWithinBox',
  'geoWithinPolygon',
];

/** Builds a filter in the union encoding: `filterOf('not', {filter})`. */
export function filterOf<T extends FilterType>(type: T, payload: FilterPayloads[T]): FilterOf<T> {
  return { type, [type]: payload } as FilterOf<T>;
}

/** Whether a (validated) filter follows a link anywhere: holds a `linkedFrom` or a `linksTo`. */
export function followsLinks(f: ObjectSearchFilter): boolean {
  switch (f.type) {
    case 'linkedFrom':
    case 'linksTo':
      return true;
    case 'and':
      return f.and.filters.some(followsLinks);
    case 'or':
      return f.or.filters.some(followsLinks);
    case 'not':
      return followsLinks(f.not.filter);
    default:
      return false;
  }
}
