import type { Violations } from './invariants.js';
import { lit, num, type ReliabilityDb } from './reliability-db.js';

/**
 * Batches over HTTP (`/v1/batches`) for the reliability checks, and the invariants of a finished
 * batch read from its results and from the database underneath.
 */

/** The batch object (OpenAI's names), as far as the checks read it. */
export interface BatchView {
  id: string;
  status: string;
  request_counts: { total: number; completed: number; failed: number };
}

/** One line of `GET /v1/batches/{id}/results`. */
export interface ResultLine {
  id: string;
  custom_id: string;
  response: { status_code: number; request_id: string; body: unknown } | null;
  error: { code: string; message: string } | null;
}

async function call(url: string, key: string, method: 'GET' | 'POST', body?: unknown): Promise<Response> {
  return fetch(url, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body !== undefined && { 'content-type': 'application/json' }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(60_000),
  });
}

/** `POST /v1/batches` of chat items; throws unless answered 200. */
export async function createChatBatch(
  baseUrl: string,
  key: string,
  requests: { custom_id: string; body: Record<string, unknown> }[],
): Promise<BatchView> {
  const response = await call(`${baseUrl}/v1/batches`, key, 'POST', {
    endpoint: '/v1/chat/completions',
    requests,
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`POST /v1/batches → ${response.status} ${text.slice(0, 500)}`);
  return JSON.parse(text) as BatchView;
}

/** `GET /v1/batches/{id}`; throws unless answered 200. */
export async function getBatch(baseUrl: string, key: string, id: string): Promise<BatchView> {
  const response = await call(`${baseUrl}/v1/batches/${encodeURIComponent(id)}`, key, 'GET');
  const text = await response.text();
  if (response.status !== 200)
    throw new Error(`GET /v1/batches/${id} → ${response.status} ${text.slice(0, 500)}`);
  return JSON.parse(text) as BatchView;
}

/**
 * Polls `GET /v1/batches/{id}` every `intervalMs` until `done(batch)` holds; bounded by `timeoutMs`
 * (then throws, with the last state seen). A transport failure counts as a poll that saw nothing.
 */
export async function pollBatch(
  baseUrl: string,
  key: string,
  id: string,
  done: (batch: BatchView) => boolean,
  options: { timeoutMs: number; intervalMs: number; what: string },
): Promise<{ batch: BatchView; polls: number }> {
  const deadline = Date.now() + options.timeoutMs;
  let last: BatchView | null = null;
  let lastError = '';
  for (let polls = 1; ; polls++) {
    try {
      last = await getBatch(baseUrl, key, id);
      if (done(last)) return { batch: last, polls };
    } catch (error) {
      lastError = (error as Error).message;
    }
    if (Date.now() >= deadline) {
      throw new Error(
        `batch ${id}: timed out after ${options.timeoutMs} ms waiting for ${options.what}; last seen ` +
          `${JSON.stringify(last)}${lastError ? ` (last error: ${lastError})` : ''}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs));
  }
}

/** `GET /v1/batches/{id}/results`, every line parsed (throws on a line that is not JSON). */
export async function readResults(baseUrl: string, key: string, id: string): Promise<ResultLine[]> {
  const response = await call(`${baseUrl}/v1/batches/${encodeURIComponent(id)}/results`, key, 'GET');
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET results → ${response.status} ${text.slice(0, 500)}`);
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as ResultLine);
}

/** Items answered 2xx (a `result_lost` line included: it was answered and charged, its answer not kept). */
export function answered2xx(line: ResultLine): boolean {
  return line.response !== null && line.response.status_code < 300;
}

/** A line in short, for tallies: `200`, `200:result_lost`, `502:upstream_error`, `none:batch_cancelled`. */
export function lineKind(line: ResultLine): string {
  const body = line.response?.body as { error?: { code?: unknown } } | null | undefined;
  const code = line.error?.code ?? (typeof body?.error?.code === 'string' ? body.error.code : null);
  return `${line.response?.status_code ?? 'none'}${code ? `:${code}` : ''}`;
}

/**
 * The results hold exactly one line per item: `expected.length` lines, each custom id of `expected`
 * once and no other, every `id` unique, and `id` == `response.request_id` on every line that ran.
 */
export function oneLinePerItem(lines: readonly ResultLine[], expected: readonly string[]): Violations {
  const out: Violations = [];
  if (lines.length !== expected.length) out.push(`${lines.length} result lines for ${expected.length} items`);
  const byCustomId = new Map<string, number>();
  for (const line of lines) byCustomId.set(line.custom_id, (byCustomId.get(line.custom_id) ?? 0) + 1);
  for (const customId of expected) {
    const n = byCustomId.get(customId) ?? 0;
    if (n !== 1) out.push(`custom_id ${customId}: ${n} lines`);
  }
  const known = new Set(expected);
  for (const customId of byCustomId.keys()) {
    if (!known.has(customId)) out.push(`a line for unknown custom_id ${customId}`);
  }
  const ids = new Map<string, number>();
  for (const line of lines) ids.set(line.id, (ids.get(line.id) ?? 0) + 1);
  for (const [id, n] of ids) if (n > 1) out.push(`id ${id} is on ${n} lines`);
  for (const line of lines) {
    if (!/^req_[0-9a-z]+$/.test(line.id)) out.push(`${line.custom_id}: id ${line.id} is not a request id`);
    if (line.response !== null && line.response.request_id !== line.id) {
      out.push(`${line.custom_id}: id ${line.id} != response.request_id ${line.response.request_id}`);
    }
    if (line.response === null && line.error?.code !== 'batch_cancelled') {
      out.push(`${line.custom_id}: no response and error ${JSON.stringify(line.error)}`);
    }
  }
  return out;
}

/** The counts agree with the lines: completed = lines answered 2xx, failed = the others, sum = total. */
export function countsMatchLines(batch: BatchView, lines: readonly ResultLine[]): Violations {
  const out: Violations = [];
  const { total, completed, failed } = batch.request_counts;
  if (completed + failed !== total) out.push(`completed ${completed} + failed ${failed} != total ${total}`);
  const ok = lines.filter(answered2xx).length;
  const notOk = lines.filter((l) => l.response !== null && !answered2xx(l)).length;
  if (ok !== completed) out.push(`request_counts.completed ${completed}, lines answered 2xx ${ok}`);
  if (notOk !== failed) out.push(`request_counts.failed ${failed}, lines answered ≥ 300 ${notOk}`);
  return out;
}

/**
 * Underneath, per item (raw SQL): every line's request id has exactly one request record of the
 * account; every item answered 2xx has exactly one `charge` entry, of its record's cost, and a
 * `success` record with a cost; an item answered with an error has no charge entry and costs 0;
 * and Σ charges of the items == Σ recorded cost of their records. Returns the sums as well.
 */
export async function itemsChargedOnce(
  db: ReliabilityDb,
  accountId: string,
  lines: readonly ResultLine[],
): Promise<{ violations: Violations; chargedMicros: number; recordCostMicros: number }> {
  const records = new Map<string, { n: number; status: string; cost: number }>();
  for (const r of await db.query(
    `SELECT id, status, cost_micros FROM request_records WHERE account_id = ${lit(accountId)}`,
  )) {
    const id = String(r.id);
    const seen = records.get(id);
    records.set(id, { n: (seen?.n ?? 0) + 1, status: String(r.status), cost: num(r.cost_micros) });
  }
  const charges = new Map<string, { n: number; micros: number }>();
  for (const e of await db.query(
    `SELECT request_id, amount_micros FROM ledger_entries WHERE account_id = ${lit(accountId)} AND kind = 'charge'`,
  )) {
    const id = String(e.request_id);
    const seen = charges.get(id);
    charges.set(id, { n: (seen?.n ?? 0) + 1, micros: (seen?.micros ?? 0) - num(e.amount_micros) });
  }
  const out: Violations = [];
  let chargedMicros = 0;
  let recordCostMicros = 0;
  for (const line of lines) {
    if (line.response === null) continue;
    const id = line.id;
    const record = records.get(id);
    const charge = charges.get(id);
    if (record?.n !== 1) {
      out.push(`${line.custom_id} (${id}): ${record?.n ?? 0} request records`);
      continue;
    }
    recordCostMicros += record.cost;
    chargedMicros += charge?.micros ?? 0;
    if (answered2xx(line)) {
      if (charge?.n !== 1)
        out.push(`${line.custom_id} (${id}) answered 2xx: ${charge?.n ?? 0} charge entries`);
      if (record.status !== 'success' || record.cost <= 0)
        out.push(`${line.custom_id} (${id}) answered 2xx: record ${record.status} costing ${record.cost} µ$`);
      if (charge && charge.micros !== record.cost)
        out.push(`${line.custom_id} (${id}): charged ${charge.micros} µ$, record costs ${record.cost} µ$`);
    } else {
      if (charge) out.push(`${line.custom_id} (${id}) answered ${line.response.status_code} but charged`);
      if (record.cost !== 0)
        out.push(`${line.custom_id} (${id}) answered ${line.response.status_code}, cost ${record.cost}`);
    }
  }
  if (chargedMicros !== recordCostMicros)
    out.push(`Σ charges of the items ${chargedMicros} µ$ != Σ their record costs ${recordCostMicros} µ$`);
  return { violations: out, chargedMicros, recordCostMicros };
}

/** Batch items by state, read underneath (raw SQL on `batch_items`). */
export async function itemStates(db: ReliabilityDb, batchId: string): Promise<Record<string, number>> {
  const rows = await db.query(
    `SELECT state, count(*) AS n FROM batch_items WHERE batch_id = ${lit(batchId)} GROUP BY state`,
  );
  return Object.fromEntries(rows.map((r) => [String(r.state), num(r.n)]));
}

/**
 * How many items this server process finished, from its JSON log: the `finishedHere` of every batch
 * progress line it wrote for `batchId` (the worker logs one whenever it goes idle, and every 1,000).
 */
export function finishedHere(output: string, batchId: string): number {
  let sum = 0;
  for (const line of output.split('\n')) {
    if (!line.includes('finishedHere') || !line.includes(batchId)) continue;
    try {
      const parsed = JSON.parse(line) as { batchId?: unknown; finishedHere?: unknown };
      if (parsed.batchId === batchId && typeof parsed.finishedHere === 'number') sum += parsed.finishedHere;
    } catch {
      // Not a JSON log line.
    }
  }
  return sum;
}

/** Lines of a server's JSON log whose `msg` matches `pattern`. */
export function logLines(output: string, pattern: RegExp): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const parsed = JSON.parse(line) as Record<string, unknown>;
      if (typeof parsed.msg === 'string' && pattern.test(parsed.msg)) out.push(parsed);
    } catch {
      // Not a JSON log line.
    }
  }
  return out;
}

/** `tollgate_batch_items{state=…}` of a server's `/metrics` (all processes on its database). */
export async function batchItemMetrics(baseUrl: string): Promise<Record<string, number>> {
  const response = await fetch(`${baseUrl}/metrics`, { signal: AbortSignal.timeout(30_000) });
  const text = await response.text();
  const out: Record<string, number> = {};
  for (const match of text.matchAll(/^tollgate_batch_items\{state="(\w+)"\}\s+(\d+)/gm)) {
    out[match[1]!] = Number(match[2]);
  }
  return out;
}
