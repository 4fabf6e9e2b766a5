import { InitialSchema1764000000000 } from './1764000000000-InitialSchema';
import { SearchIndexes1764100000000 } from './1764100000000-SearchIndexes';
import { DerivedRowsWithoutForeignKeys1764300000000 } from './1764300000000-DerivedRowsWithoutForeignKeys';
import { ValuesOntologyVersion1764400000000 } from './1764400000000-ValuesOntologyVersion';
import { ObjectTypeKeyIndex1764500000000 } from './1764500000000-ObjectTypeKeyIndex';
import { StoredObjectJson1764600000000 } from './1764600000000-StoredObjectJson';
import { CoveringValueIndexes1764700000000 } from './1764700000000-CoveringValueIndexes';
import { CompactObjectJson1764800000000 } from './1764800000000-CompactObjectJson';
import { SearchRowHistory1764917000000 } from './1764917000000-SearchRowHistory';
import { OmitNullTrigger1765000000000 } from './1765000000000-OmitNullTrigger';
import { ChangeFeed1765100000000 } from './1765100000000-ChangeFeed';
import { GeoSearch1765300000000 } from './1765300000000-GeoSearch';
import { CoveringGeoIndexes1765400000000 } from './1765400000000-CoveringGeoIndexes';
import { FullPagesForHistoryRows1765420000000 } from './1765420000000-FullPagesForHistoryRows';
import { CurrentRowsInHistory1765500000000 } from './1765500000000-CurrentRowsInHistory';
import { StoredJsonOnly1765600000000 } from './1765600000000-StoredJsonOnly';
import { CurrentVersionOnce1765700000000 } from './1765700000000-CurrentVersionOnce';
import { ClosedVersionTypeIndex1765800000000 } from './1765800000000-ClosedVersionTypeIndex';
import { ValidityEndInHistoryKeys1765900000000 } from './1765900000000-ValidityEndInHistoryKeys';

/** Every migration of schema `objects`, in order. Append new ones at the end. */
export const OBJECTS_MIGRATIONS = [
  InitialSchema1764000000000,
  SearchIndexes1764100000000,
  DerivedRowsWithoutForeignKeys1764300000000,
  ValuesOntologyVersion1764400000000,
  ObjectTypeKeyIndex1764500000000,
  StoredObjectJson1764600000000,
  CoveringValueIndexes1764700000000,
  CompactObjectJson1764800000000,
  SearchRowHistory1764917000000,
  OmitNullTrigger1765000000000,
  ChangeFeed1765100000000,
  GeoSearch1765300000000,
  CoveringGeoIndexes1765400000000,
  FullPagesForHistoryRows1765420000000,
  CurrentRowsInHistory1765500000000,
  StoredJsonOnly1765600000000,
  CurrentVersionOnce1765700000000,
  ClosedVersionTypeIndex1765800000000,
  ValidityEndInHistoryKeys1765900000000,
];
