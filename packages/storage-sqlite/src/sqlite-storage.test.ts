import { runStorageConformance } from '@tollgate/core/testing';
import BetterSqlite3 from 'better-sqlite3';
import { createSqliteStorage } from './index.js';
import { createSqliteStorageOn } from './sqlite-storage.js';
import { rawConnection, runRaw, tempDatabasePath } from './test-harness.js';

runStorageConformance({
  name: 'sqlite (file)',
  async createHarness() {
    const file = tempDatabasePath();
    const storage = await createSqliteStorage({ path: file.path });
    // Raw reads go through their own connection: they see what was committed to the file.
    const raw = rawConnection(file.path);
    return {
      storage,
      raw: async (sql) => runRaw(raw, sql),
      openSecond: () => createSqliteStorage({ path: file.path }),
      async close() {
        await storage.close();
        raw.close();
        file.remove();
      },
    };
  },
});

runStorageConformance({
  name: 'sqlite (:memory:)',
  async createHarness() {
    // A second connection to ':memory:' would open another, empty database: share the storage's.
    const database = new BetterSqlite3(':memory:');
    const storage = await createSqliteStorageOn(database);
    return {
      storage,
      raw: async (sql) => runRaw(database, sql),
      close: () => storage.close(),
    };
  },
});
