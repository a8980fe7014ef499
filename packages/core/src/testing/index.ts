export { FakeClock } from '../routing/fake-clock.js';
export { newKeyInput } from './fixtures.js';
export { healthOf } from './health-of.js';
export { meteredAccount, requestRecord } from './metering-fixtures.js';
export { REQUIRED_TABLES } from './schema-and-health.cases.js';
export { runStorageConformance } from './storage-conformance.js';
export type { StorageConformanceOptions, StorageHarness } from './storage-harness.js';
