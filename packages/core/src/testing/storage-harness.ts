import type { Storage } from '../storage/types.js';

/**
 * What an adapter hands the conformance suite for one test: a fresh, empty store plus a raw line
 * into the same database, so the suite can check what landed instead of trusting the adapter.
 */
export interface StorageHarness {
  storage: Storage;
  /**
   * Raw SQL on the same database, for checking what landed and proving the ledger is append-only.
   * Returns rows (int8 may come back as strings, booleans as 0/1; the suite normalises). Rejects
   * when the database refuses the statement.
   */
  raw(sql: string): Promise<Record<string, unknown>[]>;
  /**
   * A second, independent Storage on the same database (another connection pool, as another
   * process would have), or undefined when the adapter cannot (':memory:', PGlite). The suite
   * closes what it opens here itself, before `close()`.
   */
  openSecond?(): Promise<Storage>;
  /** Closes everything and removes temp files / drops the test schema. */
  close(): Promise<void>;
}

export interface StorageConformanceOptions {
  /** Names the adapter in the test titles, e.g. `"sqlite (file)"`. */
  name: string;
  /** Called before every test: a fresh, empty store. */
  createHarness: () => Promise<StorageHarness>;
  /** When set, the whole suite is skipped and this reason is printed in its title. */
  skip?: string;
}

/** The running test's harness, as the topic files see it (resolved per test, never cached). */
export interface ConformanceContext {
  readonly harness: StorageHarness;
  readonly storage: Storage;
  raw(sql: string): Promise<Record<string, unknown>[]>;
}
