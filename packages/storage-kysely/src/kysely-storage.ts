import type {
  EpochMs,
  Micros,
  ReserveCreditInput,
  ReserveCreditResult,
  SettleInput,
  Storage,
} from '@tollgate/core';
import { type Kysely, sql } from 'kysely';
import {
  countAccounts,
  createAccount,
  createProject,
  getAccount,
  getProject,
  listAccounts,
  setAccountSuspended,
} from './account-queries.js';
import {
  createApiKey,
  findApiKeyByHash,
  findApiKeyById,
  getApiKey,
  getApiKeyById,
  listApiKeys,
  revokeApiKey,
  updateApiKey,
} from './api-key-queries.js';
import { claimBatchItems, finishBatchItem, renewBatchLeases } from './batch-claim-queries.js';
import {
  cancelBatch,
  countBatchItems,
  createBatch,
  getBatch,
  listBatches,
  listFinishedBatchItems,
} from './batch-queries.js';
import { createByokKey, deleteByokKey, listByokKeys } from './byok-queries.js';
import type { Database } from './database.js';
import type { DialectCapabilities } from './dialect-capabilities.js';
import { createGuardrail, deleteGuardrail, listGuardrails } from './guardrail-queries.js';
import { probeWrite } from './health-queries.js';
import { claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyKey } from './idempotency-queries.js';
import { getKeyWindowSpend } from './key-window-queries.js';
import { appendLedgerEntries, getMonthToDateSpend, listLedgerEntries } from './ledger-queries.js';
import {
  createOAuthClient,
  createOAuthCode,
  deleteOAuthClient,
  getOAuthClient,
  getOAuthCode,
  issueClientCredentialsKey,
  listOAuthClients,
  redeemOAuthCode,
} from './oauth-queries.js';
import { createPreset, deletePreset, getPreset, listPresets, updatePreset } from './preset-queries.js';
import type { QueryContext } from './query-context.js';
import { type CountHit, hitRateLimit } from './rate-limit-queries.js';
import { listLedgerPage, listRequestRecordsPage } from './records-export-queries.js';
import { getRequestRecord, insertRequestRecord } from './request-record-queries.js';
import {
  extendReservation,
  listReservations,
  releaseReservation,
  reserveCredit,
} from './reservation-queries.js';
import { getCachedResponse, putCachedResponse } from './response-cache-queries.js';
import { settleRequest } from './settle-queries.js';
import { sweepExpired } from './sweep-queries.js';
import { listUsage } from './usage-queries.js';

/** Options of {@link createKyselyStorage}. */
export interface KyselyStorageOptions {
  /** The clock stamped on `created_at`; `Date.now` unless a test pins time. */
  now?: () => EpochMs;
  /** See `QueryContext.committed`: for an adapter whose transactions commit after they end. */
  committed?: () => Promise<void>;
  /** See `QueryContext.transact`: an adapter's cheaper write transaction. */
  transact?: QueryContext['transact'];
  /**
   * The adapter's own path for the request path's money and limits, made with the storage's context,
   * in place of the kysely transactions of `reservation-queries.ts`, `settle-queries.ts`,
   * `request-record-queries.ts` and `rate-limit-queries.ts` (Postgres: server-side functions, the
   * calls of one turn of the event loop in one statement). The conformance suite is the contract both
   * meet.
   */
  metering?: (ctx: QueryContext) => MeteringPath;
}

/** What an adapter's own metering path does (`KyselyStorageOptions.metering`). */
export interface MeteringPath {
  reserveCredit(input: ReserveCreditInput): Promise<ReserveCreditResult>;
  /** Also writes a record alone: a settle without a hold or a charge. */
  settleRequest(input: SettleInput): Promise<{ balanceMicros: Micros }>;
  /** A rate-limit hit's count, as `hitRateLimit` makes it. */
  countRateLimitHit: CountHit;
  /** Finishes what it has started (before the pool closes). */
  drain(): Promise<void>;
}

/**
 * Tollgate's `Storage` written once in kysely. The adapter owns the `Kysely` instance (dialect,
 * pool, migrations) and hands it over with its {@link DialectCapabilities}; `close()` destroys it.
 * Expects the schema to be migrated already (`migrateToLatest`).
 */
export function createKyselyStorage(
  db: Kysely<Database>,
  dialect: DialectCapabilities,
  options: KyselyStorageOptions = {},
): Storage {
  const ctx: QueryContext = {
    db,
    dialect,
    now: options.now ?? (() => Date.now()),
    ...(options.committed ? { committed: options.committed } : {}),
    ...(options.transact ? { transact: options.transact } : {}),
  };
  const metering = options.metering?.(ctx) ?? null;
  return {
    async ping() {
      await sql`select 1`.execute(db);
    },
    probeWrite: (now) => probeWrite(ctx, now),
    async close() {
      await metering?.drain();
      await db.destroy();
    },
    createAccount: (input) => createAccount(ctx, input),
    getAccount: (id) => getAccount(ctx, id),
    countAccounts: () => countAccounts(ctx),
    listAccounts: () => listAccounts(ctx),
    setAccountSuspended: (id, suspended) => setAccountSuspended(ctx, id, suspended),
    createProject: (input) => createProject(ctx, input),
    getProject: (accountId, projectId) => getProject(ctx, accountId, projectId),
    createApiKey: (input) => createApiKey(ctx, input),
    findApiKeyByHash: (hash) => findApiKeyByHash(ctx, hash),
    findApiKeyById: (accountId, keyId) => findApiKeyById(ctx, accountId, keyId),
    listApiKeys: (accountId) => listApiKeys(ctx, accountId),
    getApiKey: (accountId, keyId) => getApiKey(ctx, accountId, keyId),
    getApiKeyById: (keyId) => getApiKeyById(ctx, keyId),
    updateApiKey: (accountId, keyId, patch) => updateApiKey(ctx, accountId, keyId, patch),
    revokeApiKey: (accountId, keyId) => revokeApiKey(ctx, accountId, keyId),
    appendLedgerEntries: (accountId, entries) => appendLedgerEntries(ctx, accountId, entries),
    listLedgerEntries: (accountId) => listLedgerEntries(ctx, accountId),
    getMonthToDateSpend: (accountId, at) => getMonthToDateSpend(ctx, accountId, at),
    getKeyWindowSpend: (keyIds, at) => getKeyWindowSpend(ctx, keyIds, at),
    reserveCredit: metering ? metering.reserveCredit : (input) => reserveCredit(ctx, input),
    releaseReservation: (reservationId) => releaseReservation(ctx, reservationId),
    extendReservation: (reservationId, now, expiresAt) =>
      extendReservation(ctx, reservationId, now, expiresAt),
    settleRequest: metering ? metering.settleRequest : (input) => settleRequest(ctx, input),
    // On the adapter's path a record alone is a settle without hold or charge (Postgres: it joins
    // the turn's batch).
    insertRequestRecord: metering
      ? (record) =>
          metering.settleRequest({ record, charge: null, reservationId: null }).then(() => undefined)
      : (record) => insertRequestRecord(ctx, record),
    getRequestRecord: (accountId, requestId) => getRequestRecord(ctx, accountId, requestId),
    listUsage: (accountId, since) => listUsage(ctx, accountId, since),
    listRequestRecordsPage: (accountId, options) => listRequestRecordsPage(ctx, accountId, options),
    listLedgerPage: (accountId, options) => listLedgerPage(ctx, accountId, options),
    listReservations: (accountId, now) => listReservations(ctx, accountId, now),
    hitRateLimit: (input) => hitRateLimit(ctx, input, metering?.countRateLimitHit),
    claimIdempotencyKey: (input) => claimIdempotencyKey(ctx, input),
    completeIdempotencyKey: (input) => completeIdempotencyKey(ctx, input),
    releaseIdempotencyKey: (accountId, key, requestId) =>
      releaseIdempotencyKey(ctx, accountId, key, requestId),
    sweepExpired: (now) => sweepExpired(ctx, now),
    createByokKey: (input) => createByokKey(ctx, input),
    listByokKeys: (accountId) => listByokKeys(ctx, accountId),
    deleteByokKey: (accountId, id) => deleteByokKey(ctx, accountId, id),
    createGuardrail: (input) => createGuardrail(ctx, input),
    listGuardrails: (accountId) => listGuardrails(ctx, accountId),
    deleteGuardrail: (accountId, id) => deleteGuardrail(ctx, accountId, id),
    createPreset: (input) => createPreset(ctx, input),
    listPresets: (accountId) => listPresets(ctx, accountId),
    getPreset: (accountId, name) => getPreset(ctx, accountId, name),
    updatePreset: (accountId, name, patch, now) => updatePreset(ctx, accountId, name, patch, now),
    deletePreset: (accountId, name) => deletePreset(ctx, accountId, name),
    getCachedResponse: (accountId, lookupId, now) => getCachedResponse(ctx, accountId, lookupId, now),
    putCachedResponse: (entry) => putCachedResponse(ctx, entry),
    createBatch: (input) => createBatch(ctx, input),
    getBatch: (accountId, batchId) => getBatch(ctx, accountId, batchId),
    listBatches: (accountId, options) => listBatches(ctx, accountId, options),
    claimBatchItems: (input) => claimBatchItems(ctx, input),
    renewBatchLeases: (input) => renewBatchLeases(ctx, input),
    finishBatchItem: (input) => finishBatchItem(ctx, input),
    cancelBatch: (accountId, batchId, now) => cancelBatch(ctx, accountId, batchId, now),
    listFinishedBatchItems: (batchId, options) => listFinishedBatchItems(ctx, batchId, options),
    countBatchItems: () => countBatchItems(ctx),
    createOAuthClient: (input) => createOAuthClient(ctx, input),
    listOAuthClients: (accountId) => listOAuthClients(ctx, accountId),
    getOAuthClient: (clientId) => getOAuthClient(ctx, clientId),
    deleteOAuthClient: (accountId, clientId) => deleteOAuthClient(ctx, accountId, clientId),
    createOAuthCode: (input) => createOAuthCode(ctx, input),
    getOAuthCode: (codeHash) => getOAuthCode(ctx, codeHash),
    redeemOAuthCode: (input) => redeemOAuthCode(ctx, input),
    issueClientCredentialsKey: (input) => issueClientCredentialsKey(ctx, input),
  };
}
