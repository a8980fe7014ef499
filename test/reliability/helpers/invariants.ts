import { ERROR_CODES } from '@tollgate/core';
import { lit, num, type ReliabilityDb } from './reliability-db.js';

/**
 * The invariants of the reliability suite, each a function that reads the database directly (the
 * storage API and raw SQL) and returns its violations: an empty list when the invariant holds, one
 * line per broken instance otherwise. Tests assert `toEqual([])`; `checkers.reliability.ts` breaks
 * each one on purpose and asserts that it is reported.
 */
export type Violations = string[];

export interface RecordRow {
  id: string;
  status: string;
  httpStatus: number;
  costMicros: number;
  stream: boolean;
  errorCode: string | null;
}

export interface LedgerRow {
  id: string;
  kind: string;
  amountMicros: number;
  requestId: string | null;
}

export async function readRecords(db: ReliabilityDb, accountId: string): Promise<RecordRow[]> {
  const rows = await db.query(
    `SELECT id, status, http_status, cost_micros, stream, error_code FROM request_records WHERE account_id = ${lit(accountId)}`,
  );
  return rows.map((r) => ({
    id: String(r.id),
    status: String(r.status),
    httpStatus: num(r.http_status),
    costMicros: num(r.cost_micros),
    stream: r.stream === true || r.stream === 1 || r.stream === 't' || r.stream === '1',
    errorCode: r.error_code === null ? null : String(r.error_code),
  }));
}

export async function readLedger(db: ReliabilityDb, accountId: string): Promise<LedgerRow[]> {
  const rows = await db.query(
    `SELECT id, kind, amount_micros, request_id FROM ledger_entries WHERE account_id = ${lit(accountId)}`,
  );
  return rows.map((r) => ({
    id: String(r.id),
    kind: String(r.kind),
    amountMicros: num(r.amount_micros),
    requestId: r.request_id === null ? null : String(r.request_id),
  }));
}

function countBy<T>(items: T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}

function summary(counts: Map<string, number>): string {
  return [...counts.entries()]
    .sort()
    .map(([k, n]) => `${k}=${n}`)
    .join(', ');
}

/** Every request id a client was shown (header `X-Gateway-Request-Id`) has exactly one record. */
export async function oneRecordPerSeenRequestId(
  db: ReliabilityDb,
  accountId: string,
  seenIds: Iterable<string>,
): Promise<Violations> {
  const rows = await db.query(
    `SELECT id, count(*) AS n FROM request_records WHERE account_id = ${lit(accountId)} GROUP BY id`,
  );
  const counts = new Map(rows.map((r) => [String(r.id), num(r.n)]));
  const out: Violations = [];
  for (const id of new Set(seenIds)) {
    const n = counts.get(id) ?? 0;
    if (n !== 1) out.push(`request ${id} (seen by a client) has ${n} records, expected exactly 1`);
  }
  return out;
}

/**
 * Every request that reached the gateway with a valid key left exactly one record, replays and
 * requests whose client left included: the account has exactly `expected` records, none twice.
 */
export async function oneRecordPerRequest(
  db: ReliabilityDb,
  accountId: string,
  expected: number,
): Promise<Violations> {
  const records = await readRecords(db, accountId);
  const out: Violations = [];
  const dup = [...countBy(records, (r) => r.id).entries()].filter(([, n]) => n > 1);
  for (const [id, n] of dup) out.push(`request ${id} has ${n} records`);
  if (records.length !== expected) {
    out.push(
      `the account has ${records.length} request records for ${expected} requests sent ` +
        `(records by status: ${summary(countBy(records, (r) => r.status))})`,
    );
  }
  return out;
}

/**
 * Every charged request has exactly one ledger entry: `charge` entries ↔ records with cost > 0,
 * one-to-one by request id, with the same amount; no charge without a request id or a record.
 */
export async function chargesMatchRecords(db: ReliabilityDb, accountId: string): Promise<Violations> {
  const records = await readRecords(db, accountId);
  const ledger = await readLedger(db, accountId);
  const byId = new Map(records.map((r) => [r.id, r]));
  const charges = ledger.filter((e) => e.kind === 'charge');
  const out: Violations = [];
  const chargesPerRequest = new Map<string, LedgerRow[]>();
  for (const entry of charges) {
    if (entry.requestId === null) {
      out.push(`charge ${entry.id} (${entry.amountMicros}) carries no request id`);
      continue;
    }
    chargesPerRequest.set(entry.requestId, [...(chargesPerRequest.get(entry.requestId) ?? []), entry]);
  }
  for (const [requestId, entries] of chargesPerRequest) {
    if (entries.length > 1) out.push(`request ${requestId} has ${entries.length} charge entries`);
    const record = byId.get(requestId);
    if (!record) {
      out.push(`charge ${entries[0]!.id} for ${requestId} has no request record`);
      continue;
    }
    const charged = -entries.reduce((sum, e) => sum + e.amountMicros, 0);
    if (charged !== record.costMicros) {
      out.push(`request ${requestId}: record cost ${record.costMicros} µ$, ledger charged ${charged} µ$`);
    }
  }
  for (const record of records) {
    if (record.costMicros > 0 && !chargesPerRequest.has(record.id)) {
      out.push(
        `request ${record.id} (${record.status}) costs ${record.costMicros} µ$ but has no charge entry`,
      );
    }
    if (record.costMicros < 0) out.push(`request ${record.id} has a negative cost ${record.costMicros}`);
  }
  return out;
}

/**
 * balance == Σ ledger == credits − Σ charges: the cached balance (storage API and raw column)
 * equals the ledger sum; the non-charge entries add up to `creditsMicros` (what the test topped
 * up); and the charges add up to Σ record costs.
 */
export async function balanceMatchesLedger(
  db: ReliabilityDb,
  accountId: string,
  creditsMicros: number,
): Promise<Violations> {
  const out: Violations = [];
  const account = await db.storage.getAccount(accountId);
  const raw = await db.query(`SELECT balance_micros FROM accounts WHERE id = ${lit(accountId)}`);
  const ledger = await readLedger(db, accountId);
  const records = await readRecords(db, accountId);
  const ledgerSum = ledger.reduce((sum, e) => sum + e.amountMicros, 0);
  const credits = ledger.filter((e) => e.kind !== 'charge').reduce((sum, e) => sum + e.amountMicros, 0);
  const charges = -ledger.filter((e) => e.kind === 'charge').reduce((sum, e) => sum + e.amountMicros, 0);
  const recordCosts = records.reduce((sum, r) => sum + r.costMicros, 0);
  const rawBalance = num(raw[0]?.balance_micros);
  if (!account) return [`account ${accountId} does not exist`];
  if (account.balanceMicros !== rawBalance)
    out.push(`storage says balance ${account.balanceMicros}, the column says ${rawBalance}`);
  if (rawBalance !== ledgerSum) out.push(`balance ${rawBalance} µ$ != Σ ledger ${ledgerSum} µ$`);
  if (credits !== creditsMicros)
    out.push(`Σ credit/fee entries ${credits} µ$ != credits topped up ${creditsMicros} µ$`);
  if (rawBalance !== creditsMicros - charges)
    out.push(
      `balance ${rawBalance} µ$ != credits ${creditsMicros} − Σ charges ${charges} = ${creditsMicros - charges}`,
    );
  if (charges !== recordCosts) out.push(`Σ charges ${charges} µ$ != Σ record costs ${recordCosts} µ$`);
  return out;
}

/** Statuses of requests that never answered: refused before the provider, or every route failed. */
const UNCHARGEABLE = new Set(['refused', 'error']);

/**
 * Nothing is charged for refused or fully failed requests: records with status refused/error (and
 * non-streamed requests whose client left before the answer) have cost 0 and no ledger entry, and
 * so does every request a client saw fail (`failedIds`, non-2xx answers).
 */
export async function nothingChargedForFailures(
  db: ReliabilityDb,
  accountId: string,
  failedIds: Iterable<string> = [],
): Promise<Violations> {
  const records = await readRecords(db, accountId);
  const ledger = await readLedger(db, accountId);
  const charged = new Set(ledger.filter((e) => e.requestId !== null).map((e) => e.requestId!));
  const byId = new Map(records.map((r) => [r.id, r]));
  const out: Violations = [];
  for (const r of records) {
    const unchargeable = UNCHARGEABLE.has(r.status) || (r.status === 'client_closed' && !r.stream);
    if (!unchargeable) continue;
    if (r.costMicros !== 0)
      out.push(`${r.status} request ${r.id} (${r.errorCode}) has cost ${r.costMicros} µ$`);
    if (charged.has(r.id)) out.push(`${r.status} request ${r.id} (${r.errorCode}) has a ledger entry`);
  }
  for (const id of new Set(failedIds)) {
    const r = byId.get(id);
    if (r && r.costMicros !== 0)
      out.push(`request ${id} failed for its client but its record costs ${r.costMicros} µ$`);
    if (charged.has(id)) out.push(`request ${id} failed for its client but has a ledger entry`);
  }
  return out;
}

/** No credit hold is left: none live at `now` (storage API), and no row at all for the account. */
export async function noReservationLeft(
  db: ReliabilityDb,
  accountId: string,
  now: number,
): Promise<Violations> {
  const out: Violations = [];
  const live = await db.storage.listReservations(accountId, now);
  for (const hold of live) {
    out.push(
      `live hold ${hold.id} of ${hold.amountMicros} µ$ for ${hold.requestId} (expires ${hold.expiresAt})`,
    );
  }
  const rows = await db.query(
    `SELECT count(*) AS n FROM credit_reservations WHERE account_id = ${lit(accountId)}`,
  );
  const n = num(rows[0]?.n);
  if (n !== live.length) out.push(`${n} credit_reservations rows remain (${live.length} of them live)`);
  return out;
}

/** No idempotency claim is left `in_flight` (raw SQL on `idempotency_claims`). */
export async function noClaimLeftInFlight(db: ReliabilityDb, accountId: string): Promise<Violations> {
  const rows = await db.query(
    `SELECT request_id, expires_at FROM idempotency_claims WHERE account_id = ${lit(accountId)} AND state = 'in_flight'`,
  );
  return rows.map(
    (r) => `idempotency claim of ${String(r.request_id)} is still in_flight (expires ${num(r.expires_at)})`,
  );
}

/** No settled entry lost: every entry of `snapshot` (ledger ids read earlier) is still there. */
export async function ledgerEntriesKept(
  db: ReliabilityDb,
  accountId: string,
  snapshot: Iterable<string>,
): Promise<Violations> {
  const now = new Set((await readLedger(db, accountId)).map((e) => e.id));
  return [...snapshot].filter((id) => !now.has(id)).map((id) => `ledger entry ${id} was lost`);
}

/** Every charge a client was told about (request id → µ$) is in the ledger with that amount. */
export async function acknowledgedChargesKept(
  db: ReliabilityDb,
  accountId: string,
  acknowledged: Map<string, number>,
): Promise<Violations> {
  const ledger = await readLedger(db, accountId);
  const charged = new Map<string, number>();
  for (const e of ledger) {
    if (e.kind === 'charge' && e.requestId)
      charged.set(e.requestId, (charged.get(e.requestId) ?? 0) - e.amountMicros);
  }
  const out: Violations = [];
  for (const [id, micros] of acknowledged) {
    if (micros === 0) continue;
    const got = charged.get(id);
    if (got === undefined)
      out.push(`request ${id} was answered with cost ${micros} µ$ but has no charge entry`);
    else if (got !== micros)
      out.push(`request ${id} was answered with cost ${micros} µ$ but charged ${got} µ$`);
  }
  return out;
}

/** Holds left by a dead process are not live at `at` (their expiry has passed by then). */
export async function holdsExpiredBy(db: ReliabilityDb, accountId: string, at: number): Promise<Violations> {
  const live = await db.storage.listReservations(accountId, at);
  return live.map((h) => `hold ${h.id} for ${h.requestId} is still live at ${at} (expires ${h.expiresAt})`);
}

/** In-flight claims left by a dead process are expired at `at`. */
export async function claimsExpiredBy(db: ReliabilityDb, accountId: string, at: number): Promise<Violations> {
  const rows = await db.query(
    `SELECT request_id, expires_at FROM idempotency_claims WHERE account_id = ${lit(accountId)} AND state = 'in_flight' AND expires_at > ${Math.trunc(at)}`,
  );
  return rows.map(
    (r) => `in-flight claim of ${String(r.request_id)} is still live at ${at} (expires ${num(r.expires_at)})`,
  );
}

/** A limit is not exceeded by a single micro. */
export function withinLimit(what: string, used: number, limit: number): Violations {
  return used <= limit
    ? []
    : [`${what}: ${used} µ$ used of a ${limit} µ$ limit (over by ${used - limit} µ$)`];
}

/** An exact count (rpm admissions, upstream calls per idempotency key, …). */
export function exactly(what: string, got: number, expected: number): Violations {
  return got === expected ? [] : [`${what}: ${got}, expected exactly ${expected}`];
}

/** None of `canaries` occurs in `haystack` (raw bytes, or text). */
export function canariesAbsent(
  where: string,
  haystack: Buffer | string,
  canaries: readonly string[],
): Violations {
  const bytes = typeof haystack === 'string' ? Buffer.from(haystack) : haystack;
  const out: Violations = [];
  for (const canary of canaries) {
    const at = bytes.indexOf(canary);
    if (at >= 0) {
      const context = bytes
        .subarray(Math.max(0, at - 40), at + canary.length + 40)
        .toString('utf8')
        .replace(/[^\x20-\x7e]/g, '.');
      out.push(`${where} contains canary ${canary} at byte ${at}: …${context}…`);
    }
  }
  return out;
}

/**
 * Nothing in a server's log `output` at error level or above: no pino JSON line with level ≥ 50
 * (error, fatal), and no other line that says error, exception or uncaught (a stack trace on stderr).
 */
export function noErrorLogLines(what: string, output: string): Violations {
  return output
    .split('\n')
    .filter((line) => {
      if (line.trim() === '') return false;
      try {
        return Number(JSON.parse(line)?.level) >= 50;
      } catch {
        return /error|exception|uncaught/i.test(line);
      }
    })
    .map((line) => `${what}: logged at error level: ${line.slice(0, 300)}`);
}

/** What a fuzzed request got back. */
export interface FuzzResponse {
  status: number;
  headers: Headers;
  text: string;
}

/**
 * Never a 5xx; a failure is the spec's envelope `{error: {message, type, code, request_id}}` with
 * the status and type of its code and the request id in `X-Gateway-Request-Id`; a success is JSON
 * (or an event stream, for a streamed chat completion).
 */
export function errorEnvelopeOr2xx(
  what: string,
  response: FuzzResponse,
  options: { bodiless?: boolean; rfc6749?: boolean; anthropic?: boolean } = {},
): Violations {
  const out: Violations = [];
  const ctx = `${what} → ${response.status} ${response.text.slice(0, 300)}`;
  if (response.status >= 500) out.push(`5xx: ${ctx}`);
  if (response.status < 200 || (response.status >= 300 && response.status < 400))
    out.push(`unexpected status: ${ctx}`);
  const contentType = response.headers.get('content-type') ?? '';
  const requestId = response.headers.get('x-gateway-request-id');
  if (!requestId || !/^req_[0-9a-z]+$/.test(requestId)) out.push(`no X-Gateway-Request-Id: ${ctx}`);
  // A HEAD answer has headers only.
  if (options.bodiless) return out;
  if (response.status >= 200 && response.status < 300) {
    if (contentType.startsWith('text/event-stream')) return out;
    // The CSV export (`GET /v1/generations/export`) answers CSV by contract.
    if (contentType.startsWith('text/csv')) return out;
    if (response.status === 204 && response.text === '') return out;
    try {
      JSON.parse(response.text);
    } catch {
      out.push(`2xx body is not JSON: ${ctx}`);
    }
    return out;
  }
  if (!contentType.startsWith('application/json'))
    out.push(`error is not JSON (content-type ${contentType}): ${ctx}`);
  let body: unknown;
  try {
    body = JSON.parse(response.text);
  } catch {
    out.push(`error body is not JSON: ${ctx}`);
    return out;
  }
  // The OAuth endpoints answer their own failures in RFC 6749's shape (§5.2), by contract.
  if (options.rfc6749 && oauthErrorBody(body, response.status)) return out;
  // The Messages wire answers its failures in Anthropic's shape, by contract (product.md); what no
  // route serves (another method, an unknown path) gets the spec's envelope like anywhere else.
  if (options.anthropic && (body as { type?: unknown } | null)?.type === 'error')
    return [...out, ...anthropicErrorBody(body, response.status, requestId, ctx)];
  const error = (body as { error?: Record<string, unknown> })?.error;
  if (!error || Object.keys(body as object).join() !== 'error') {
    out.push(`not the error envelope: ${ctx}`);
    return out;
  }
  const keys = Object.keys(error).sort().join();
  if (keys !== 'code,message,request_id,type') out.push(`envelope keys ${keys}: ${ctx}`);
  const code = String(error.code);
  const known = (ERROR_CODES as Record<string, { status: number; type: string }>)[code];
  if (!known) out.push(`unknown error code ${code}: ${ctx}`);
  else {
    if (known.status !== response.status)
      out.push(`code ${code} is ${known.status}, sent ${response.status}: ${ctx}`);
    if (known.type !== error.type)
      out.push(`code ${code} has type ${known.type}, sent ${String(error.type)}: ${ctx}`);
  }
  if (typeof error.message !== 'string' || error.message.length === 0) out.push(`empty message: ${ctx}`);
  if (error.request_id !== requestId)
    out.push(`request_id ${String(error.request_id)} != header ${requestId}: ${ctx}`);
  return out;
}

/** Anthropic's status for each of its error types (what `/v1/messages*` answers with). */
const ANTHROPIC_STATUS_OF_TYPE: Record<string, (status: number) => boolean> = {
  invalid_request_error: (s) => s >= 400 && s < 500,
  authentication_error: (s) => s === 401,
  billing_error: (s) => s === 402,
  permission_error: (s) => s === 403,
  not_found_error: (s) => s === 404,
  request_too_large: (s) => s === 413,
  rate_limit_error: (s) => s === 429,
  api_error: (s) => s >= 500,
  overloaded_error: (s) => s === 529,
};

/**
 * Anthropic's error body: exactly `{type: "error", error: {type, message}, request_id}`, a type that
 * fits the status, a message that starts with one of the gateway's codes, the header's request id.
 */
function anthropicErrorBody(
  body: unknown,
  status: number,
  requestId: string | null,
  ctx: string,
): Violations {
  const out: Violations = [];
  const { type, error, request_id } = (body ?? {}) as Record<string, unknown>;
  if (
    type !== 'error' ||
    Object.keys(body as object)
      .sort()
      .join() !== 'error,request_id,type' ||
    !error
  ) {
    return [`not Anthropic's error envelope: ${ctx}`];
  }
  const inner = error as Record<string, unknown>;
  if (Object.keys(inner).sort().join() !== 'message,type') out.push(`Anthropic error keys: ${ctx}`);
  const fits = ANTHROPIC_STATUS_OF_TYPE[String(inner.type)];
  if (!fits?.(status)) out.push(`Anthropic error type ${String(inner.type)} with status ${status}: ${ctx}`);
  const code = String(inner.message ?? '').split(':')[0] ?? '';
  if (!(code in ERROR_CODES)) out.push(`Anthropic error message does not start with a gateway code: ${ctx}`);
  if (request_id !== requestId) out.push(`request_id ${String(request_id)} != header ${requestId}: ${ctx}`);
  return out;
}

/** An RFC 6749 §5.2 error: `{error, error_description?}` with a 400 or 401. */
function oauthErrorBody(body: unknown, status: number): boolean {
  if (status !== 400 && status !== 401) return false;
  const { error, error_description, ...rest } = (body ?? {}) as Record<string, unknown>;
  return (
    typeof error === 'string' &&
    /^[a-z_]+$/.test(error) &&
    (error_description === undefined || typeof error_description === 'string') &&
    Object.keys(rest).length === 0
  );
}

/** What a client was shown, as far as the checks below need it. */
export interface Shown {
  label: string;
  status: number | null;
  requestId: string | null;
  kind: string;
  errorCode: string | null;
  shownCostMicros: number | null;
  costHeaderUsd: string | null;
  done?: boolean;
  transportError?: string;
}

/** Every cost shown to a client (body, terminal chunk, `X-Gateway-Cost-Usd`) is the cost on record. */
export async function shownCostsMatchRecords(
  db: ReliabilityDb,
  accountId: string,
  shown: readonly Shown[],
  formatUsd: (micros: number) => string,
): Promise<Violations> {
  const records = new Map((await readRecords(db, accountId)).map((r) => [r.id, r]));
  const out: Violations = [];
  for (const s of shown) {
    if (s.status !== 200 || s.shownCostMicros === null || !s.requestId) continue;
    const record = records.get(s.requestId);
    if (!record) continue; // the record checks report it
    if (record.costMicros !== s.shownCostMicros) {
      out.push(`${s.label} ${s.requestId}: shown ${s.shownCostMicros} µ$, recorded ${record.costMicros} µ$`);
    }
    if (s.kind === 'json' && s.costHeaderUsd !== null && s.costHeaderUsd !== formatUsd(s.shownCostMicros)) {
      out.push(`${s.label}: X-Gateway-Cost-Usd ${s.costHeaderUsd} != ${formatUsd(s.shownCostMicros)}`);
    }
  }
  return out;
}

/** Under chaos every answer is one the spec allows, never a 500 or a dropped connection. */
export function noInternalErrors(shown: readonly Shown[], allowed: readonly number[]): Violations {
  return shown.flatMap((s): string[] => {
    if (s.kind === 'aborted') return [];
    if (s.kind === 'transport') return [`${s.label}: no response (${s.transportError})`];
    if (!allowed.includes(s.status!)) return [`${s.label}: ${s.status} ${s.errorCode} (${s.requestId})`];
    if (s.status === 200 && s.kind === 'sse' && s.done === false)
      return [`${s.label}: stream ended without [DONE]`];
    return [];
  });
}

/** Requests that shared an Idempotency-Key got one answer (one request id) and were charged at most once. */
export async function idempotentGroupsConsistent(
  db: ReliabilityDb,
  accountId: string,
  groups: Map<string, readonly Shown[]>,
): Promise<Violations> {
  const records = new Map((await readRecords(db, accountId)).map((r) => [r.id, r]));
  const out: Violations = [];
  for (const [key, group] of groups) {
    const answered = new Set(group.filter((s) => s.status === 200).map((s) => s.requestId));
    if (answered.size > 1)
      out.push(`${key}: ${answered.size} different answers (${[...answered].join(', ')})`);
    const charged = new Set(
      group
        .filter((s) => s.requestId && (records.get(s.requestId)?.costMicros ?? 0) > 0)
        .map((s) => s.requestId),
    );
    if (charged.size > 1) out.push(`${key}: ${charged.size} charged requests`);
  }
  return out;
}
