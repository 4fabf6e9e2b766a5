import { join } from 'node:path';

/** The repository's root, for tests that read its files or run its scripts (wherever the test file lives under test/). */
export const ROOT = join(__dirname, '../..');
