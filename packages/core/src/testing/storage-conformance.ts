import { afterEach, beforeEach, describe } from 'vitest';
import { accountFeaturesCases } from './account-features.cases.js';
import { accountsAndProjectsCases } from './accounts-and-projects.cases.js';
import { apiKeysCases } from './api-keys.cases.js';
import { batchesCases } from './batches.cases.js';
import { guardrailsCases } from './guardrails.cases.js';
import { idempotencyCases } from './idempotency.cases.js';
import { keyRevocationCases } from './key-revocation.cases.js';
import { keyWindowsCases } from './key-windows.cases.js';
import { ledgerCases } from './ledger.cases.js';
import { ledgerConcurrencyCases } from './ledger-concurrency.cases.js';
import { monthToDateSpendCases } from './month-to-date-spend.cases.js';
import { oauthCases } from './oauth.cases.js';
import { oauthClientKeysCases } from './oauth-client-keys.cases.js';
import { rateLimitCases } from './rate-limit.cases.js';
import { rateLimitedReserveCases } from './rate-limited-reserve.cases.js';
import { recordsExportCases } from './records-export.cases.js';
import { requestInProgressCases } from './request-in-progress.cases.js';
import { requestRecordsCases } from './request-records.cases.js';
import { reservationsCases } from './reservations.cases.js';
import { responseCacheCases } from './response-cache.cases.js';
import { schemaAndHealthCases } from './schema-and-health.cases.js';
import { settleCases } from './settle.cases.js';
import type { ConformanceContext, StorageConformanceOptions, StorageHarness } from './storage-harness.js';
import { sweepExpiredCases } from './sweep-expired.cases.js';

/**
 * Registers the storage conformance suite for one adapter. Call it at the top level of the
 * adapter's test file. Every test gets a fresh, empty store from `createHarness` and closes it
 * afterwards, builds its own data, and checks what landed with raw SQL as well as through the
 * adapter.
 */
export function runStorageConformance({ name, createHarness, skip }: StorageConformanceOptions): void {
  if (skip !== undefined) {
    describe.skip(`Storage conformance: ${name} (skipped: ${skip})`, () => registerCases(unreachable));
    return;
  }

  describe(`Storage conformance: ${name}`, () => {
    let current: StorageHarness | undefined;
    beforeEach(async () => {
      current = await createHarness();
    });
    afterEach(async () => {
      const harness = current;
      current = undefined;
      await harness?.close();
    });

    const harness = (): StorageHarness => {
      if (!current) throw new Error('no storage harness: createHarness failed or the test ran outside it');
      return current;
    };
    registerCases({
      get harness() {
        return harness();
      },
      get storage() {
        return harness().storage;
      },
      raw: (sql) => harness().raw(sql),
    });
  });
}

function registerCases(ctx: ConformanceContext): void {
  schemaAndHealthCases(ctx);
  accountsAndProjectsCases(ctx);
  apiKeysCases(ctx);
  keyRevocationCases(ctx);
  ledgerCases(ctx);
  ledgerConcurrencyCases(ctx);
  monthToDateSpendCases(ctx);
  reservationsCases(ctx);
  keyWindowsCases(ctx);
  settleCases(ctx);
  requestInProgressCases(ctx);
  requestRecordsCases(ctx);
  recordsExportCases(ctx);
  rateLimitCases(ctx);
  rateLimitedReserveCases(ctx);
  idempotencyCases(ctx);
  sweepExpiredCases(ctx);
  accountFeaturesCases(ctx);
  responseCacheCases(ctx);
  batchesCases(ctx);
  oauthCases(ctx);
  oauthClientKeysCases(ctx);
  guardrailsCases(ctx);
}

/** A skipped suite still lists its tests (so the report shows what was skipped) but never runs them. */
const unreachable: ConformanceContext = {
  get harness(): never {
    throw new Error('skipped suite');
  },
  get storage(): never {
    throw new Error('skipped suite');
  },
  raw: () => Promise.reject(new Error('skipped suite')),
};
