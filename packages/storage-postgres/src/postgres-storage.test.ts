import { PGlite } from '@electric-sql/pglite';
import { runStorageConformance } from '@tollgate/core/testing';
import { afterAll } from 'vitest';
import { pgliteHarness, postgresHarness } from './test-harness.js';

let pglite: PGlite | undefined;
afterAll(() => pglite?.close());

runStorageConformance({
  name: 'postgres (PGlite, in-process)',
  async createHarness() {
    pglite ??= await PGlite.create();
    return pgliteHarness(pglite);
  },
});

const databaseUrl = process.env.TEST_DATABASE_URL;

runStorageConformance({
  name: 'postgres (server at TEST_DATABASE_URL)',
  createHarness: () => postgresHarness(databaseUrl!),
  ...(databaseUrl ? {} : { skip: 'TEST_DATABASE_URL is not set' }),
});
