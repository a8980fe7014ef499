export { createPgliteStorage, type PgliteStorageOptions } from './pglite-storage.js';
export { postgresCapabilities } from './postgres-capabilities.js';
export { createPostgresStorage, type PostgresStorageOptions } from './postgres-storage.js';
