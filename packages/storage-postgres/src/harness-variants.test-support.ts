import { PGlite } from '@electric-sql/pglite';
import type { StorageHarness } from '@tollgate/core/testing';
import { afterAll, afterEach } from 'vitest';
import { pgliteHarness, postgresHarness } from './test-harness.js';

/** One database a test file runs its cases on; `skip` says why it cannot here. */
export interface HarnessVariant {
  name: string;
  skip?: string;
  /** A fresh schema's harness, closed again after the test. */
  open(): Promise<StorageHarness>;
}

/**
 * The two databases a Postgres test file runs on, PGlite (one instance for the file, a schema per
 * test) and the server at `TEST_DATABASE_URL` when it is set, with the file's hooks: `cleanups` run
 * after each test, newest first, and the shared PGlite closes after the last.
 */
export function postgresTestBed() {
  let shared: PGlite | undefined;
  const cleanups: (() => unknown)[] = [];
  afterAll(() => shared?.close());
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const databaseUrl = process.env.TEST_DATABASE_URL;
  const sharedPglite = async () => {
    shared ??= await PGlite.create();
    return shared;
  };
  const closedAfter = async (harness: Promise<StorageHarness>) => {
    const opened = await harness;
    cleanups.push(() => opened.close());
    return opened;
  };
  const variants: HarnessVariant[] = [
    { name: 'PGlite', open: async () => closedAfter(pgliteHarness(await sharedPglite())) },
    {
      name: 'server',
      ...(databaseUrl ? {} : { skip: 'TEST_DATABASE_URL is not set' }),
      open: () => closedAfter(postgresHarness(databaseUrl!)),
    },
  ];
  return { variants, cleanups, sharedPglite, databaseUrl };
}
