import { MigrationInterface } from 'typeorm';
import { ObjectSetsSchema1764200000000 } from './1764200000000-ObjectSetsSchema';
import { SetTimesInMilliseconds1764810000000 } from './1764810000000-SetTimesInMilliseconds';
import { SetTitleHashIndex1764820000000 } from './1764820000000-SetTitleHashIndex';
import { ObjectSetHistory1764917000000 } from './1764917000000-ObjectSetHistory';
import { SetChangeFeed1765100000000 } from './1765100000000-SetChangeFeed';
import { FuzzyTitleMatches1765200000000 } from './1765200000000-FuzzyTitleMatches';

/** Every migration of schema `object_sets`, in order. Append new ones at the end. */
export const OBJECT_SETS_MIGRATIONS: (new () => MigrationInterface)[] = [
  ObjectSetsSchema1764200000000,
  SetTimesInMilliseconds1764810000000,
  SetTitleHashIndex1764820000000,
  ObjectSetHistory1764917000000,
  SetChangeFeed1765100000000,
  FuzzyTitleMatches1765200000000,
];
