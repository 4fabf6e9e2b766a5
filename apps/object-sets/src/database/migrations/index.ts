import { MigrationInterface } from 'typeorm';

/** Every migration of schema `object_sets`, in order. Append new ones at the end. */
export const OBJECT_SETS_MIGRATIONS: (new () => MigrationInterface)[] = [];
