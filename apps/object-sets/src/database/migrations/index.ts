import { MigrationInterface } from 'typeorm';
import { ObjectSetsSchema1764200000000 } from './1764200000000-ObjectSetsSchema';

/** Every migration of schema `object_sets`, in order. Append new ones at the end. */
export const OBJECT_SETS_MIGRATIONS: (new () => MigrationInterface)[] = [ObjectSetsSchema1764200000000];
