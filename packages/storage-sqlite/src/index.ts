export { sqliteCapabilities } from './sqlite-capabilities.js';
export { createSqliteStorage, type SqliteStorageOptions } from './sqlite-storage.js';
