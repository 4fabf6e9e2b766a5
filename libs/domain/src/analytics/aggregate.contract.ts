/**
 * The aggregation contract between the two apps, in one place: the object set service compiles
 * a set to one filter (STRONG) and asks the objects app to aggregate it, forwarding the caller's
 * credentials so visibility holds. The objects app answers exactly what
 * `POST /objects/aggregate` answers; its 4xx errors (InvalidArgument with the `groupBy` /
 * `metrics` path) reach the caller unchanged.
 */
import { ObjectSearchFilter } from '../filter/filter.types';

// Its route and path (INTERNAL_AGGREGATE_ROUTE, INTERNAL_AGGREGATE_PATH) are in the contract
// between the apps, internal-api/internal-api.contract.ts.

/** The body of `POST /objects/internal/aggregate`. */
export interface InternalAggregateRequest {
  /** A compiled object set filter (checked with the larger bounds of compiled filters). */
  filter: ObjectSearchFilter;
  /** As the caller sent them; validated by the objects app. */
  groupBy?: unknown;
  metrics?: unknown;
  /** Aggregate the members as of this instant (RFC 3339; docs/api.md §10). */
  asOf?: string;
}

/** One group of an aggregation: its key per bucket name, and its metrics by name (a metric over no values is absent). */
export interface AggregateGroup {
  key: Record<string, unknown>;
  metrics: Record<string, unknown>;
}

/** The answer of both aggregate endpoints (and of the internal one). */
export interface AggregateResponse {
  groups: AggregateGroup[];
  truncated: boolean;
  /** The instant aggregated at, when the request gave asOf. */
  asOf?: string;
}
