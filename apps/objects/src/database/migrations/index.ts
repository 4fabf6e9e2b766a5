import { InitialSchema1764000000000 } from './1764000000000-InitialSchema';

/** Every migration of schema `objects`, in order. Append new ones at the end. */
export const OBJECTS_MIGRATIONS = [InitialSchema1764000000000];
