import Database from 'better-sqlite3';
import pg from 'pg';
import type { BenchDb } from './tollgate-process.js';

/*
 * Proof that the bench took no shortcut: read straight from the bench database (not through
 * Tollgate) how many requests were recorded and charged, once the server has drained and stopped.
 * The queries take every endpoint (chat completions and embeddings alike); `byEndpoint` splits them.
 */

export interface EndpointMetering {
  records: number;
  successRecords: number;
  /** Served from the response cache: success records that cost nothing by design. */
  cacheHits: number;
  chargedRecords: number;
  costMicros: number;
}

export interface Metering {
  records: number;
  /** Records by `status http_status error_code`, e.g. `success 200` or `client_closed 499`. */
  byOutcome: Record<string, number>;
  /** Records by the request record's `endpoint` (`chat.completions`, `embeddings`). */
  byEndpoint: Record<string, EndpointMetering>;
  successRecords: number;
  /** Success records answered from the response cache (cost 0, no charge). */
  cacheHits: number;
  /** Records with a non-zero cost: each must have exactly one charge entry. */
  chargedRecords: number;
  chargeEntries: number;
  /** Σ cost_micros of the records and −Σ amount_micros of the charge entries: equal when consistent. */
  recordCostMicros: number;
  chargedMicros: number;
  /** Credit holds not released (every settled request releases its own). */
  openHolds: number;
}

const QUERIES = {
  outcomes: `select endpoint, status, http_status, error_code, count(*) as n, sum(cost_micros) as cost,
             sum(case when cost_micros > 0 then 1 else 0 end) as charged,
             sum(case when cache_hit then 1 else 0 end) as hits
             from request_records group by endpoint, status, http_status, error_code`,
  charges: `select count(*) as n, coalesce(sum(amount_micros), 0) as total
            from ledger_entries where kind = 'charge'`,
  holds: 'select count(*) as n from credit_reservations',
};

interface OutcomeRow {
  endpoint: string;
  status: string;
  http_status: number | string;
  error_code: string | null;
  n: number | string;
  cost: number | string | null;
  charged: number | string | null;
  hits: number | string | null;
}

type Rows = {
  outcomes: OutcomeRow[];
  charges: { n: number | string; total: number | string };
  holds: number;
};

function summarise({ outcomes, charges, holds }: Rows): Metering {
  const byOutcome: Record<string, number> = {};
  const byEndpoint: Record<string, EndpointMetering> = {};
  let records = 0;
  let successRecords = 0;
  let chargedRecords = 0;
  let cacheHits = 0;
  let recordCostMicros = 0;
  for (const row of outcomes) {
    const n = Number(row.n);
    const cost = Number(row.cost ?? 0);
    const charged = Number(row.charged ?? 0);
    const hits = Number(row.hits ?? 0);
    const outcome = [row.status, row.http_status, row.error_code].filter((x) => x !== null).join(' ');
    byOutcome[outcome] = (byOutcome[outcome] ?? 0) + n;
    byEndpoint[row.endpoint] ??= {
      records: 0,
      successRecords: 0,
      cacheHits: 0,
      chargedRecords: 0,
      costMicros: 0,
    };
    const endpoint = byEndpoint[row.endpoint] as EndpointMetering;
    endpoint.records += n;
    endpoint.chargedRecords += charged;
    endpoint.cacheHits += hits;
    endpoint.costMicros += cost;
    records += n;
    if (row.status === 'success') {
      successRecords += n;
      endpoint.successRecords += n;
    }
    recordCostMicros += cost;
    chargedRecords += charged;
    cacheHits += hits;
  }
  return {
    records,
    byOutcome,
    byEndpoint,
    successRecords,
    cacheHits,
    chargedRecords,
    chargeEntries: Number(charges.n),
    recordCostMicros,
    chargedMicros: -Number(charges.total),
    openHolds: holds,
  };
}

/** The counts in the bench database (better-sqlite3 or pg, read-only queries). */
export async function readMetering(db: BenchDb): Promise<Metering> {
  if (db.kind === 'sqlite') {
    const sqlite = new Database(db.path, { readonly: true, fileMustExist: true });
    try {
      return summarise({
        outcomes: sqlite.prepare(QUERIES.outcomes).all() as OutcomeRow[],
        charges: sqlite.prepare(QUERIES.charges).get() as Rows['charges'],
        holds: Number((sqlite.prepare(QUERIES.holds).get() as { n: number }).n),
      });
    } finally {
      sqlite.close();
    }
  }
  const client = new pg.Client({ connectionString: db.url, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    const outcomes = (await client.query<OutcomeRow>(QUERIES.outcomes)).rows;
    const charges = (await client.query<Rows['charges']>(QUERIES.charges)).rows[0] as Rows['charges'];
    const holds = Number((await client.query<{ n: string }>(QUERIES.holds)).rows[0]?.n ?? 0);
    return summarise({ outcomes, charges, holds });
  } finally {
    await client.end();
  }
}
