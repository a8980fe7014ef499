import type { RequestRecord } from '../../storage/metering-types.js';
import { generationView } from './generation-route.js';

/** The export's columns, in order: the header line, and the order of every row's cells. */
export const EXPORT_COLUMNS = [
  'request_id',
  'created_at',
  'key_id',
  'model',
  'requested_model',
  'provider',
  'status',
  'http_status',
  'error_code',
  'prompt_tokens',
  'completion_tokens',
  'cached_tokens',
  'cost_micros',
  'cost_usd',
  'saved_usd',
  'waived',
  'byok',
  'cache_hit',
  'ttft_ms',
  'duration_ms',
  'finish_reason',
  'attempts',
  'guardrails',
  'metadata',
] as const;

type Cell = string | number | boolean | null;

/** The header line, newline included. */
export const EXPORT_HEADER = `${EXPORT_COLUMNS.join(',')}\n`;

/**
 * One record as a CSV line (newline included), built from the `GET /generation` view so the two
 * never disagree. `requested_model` is always the id the caller sent (the record keeps it only when
 * it differs from the model that served). `guardrails` is the JSON of the verdicts (which rule,
 * never the matched text), `metadata` the JSON of the metadata; `null` is an empty cell.
 */
export function recordCsvLine(record: RequestRecord): string {
  const view = generationView(record);
  const cells: Record<(typeof EXPORT_COLUMNS)[number], Cell> = {
    request_id: view.id,
    created_at: view.created_at,
    key_id: view.key_id,
    model: view.model,
    requested_model: view.requested_model ?? view.model,
    provider: view.provider,
    status: view.status,
    http_status: view.http_status,
    error_code: view.error?.code ?? null,
    prompt_tokens: view.usage.prompt_tokens,
    completion_tokens: view.usage.completion_tokens,
    cached_tokens: view.usage.cached_tokens,
    cost_micros: view.cost_micros,
    cost_usd: view.cost_usd,
    saved_usd: view.saved_usd,
    waived: view.waived,
    byok: view.byok,
    cache_hit: view.cache_hit,
    ttft_ms: view.ttft_ms,
    duration_ms: view.duration_ms,
    finish_reason: view.finish_reason,
    attempts: view.attempts,
    guardrails: verdictsJson(record),
    metadata: JSON.stringify(view.metadata),
  };
  return `${EXPORT_COLUMNS.map((column) => csvCell(cells[column])).join(',')}\n`;
}

/**
 * The verdicts as JSON, each reduced to what a verdict holds (which rule, never what it matched);
 * `[]` when no rule fired, an empty cell should a record have none at all.
 */
function verdictsJson(record: RequestRecord): string | null {
  const verdicts = record.guardrails as RequestRecord['guardrails'] | null;
  if (!verdicts) return null;
  return JSON.stringify(
    verdicts.map(({ rule_id, name, category, stage }) => ({ rule_id, name, category, stage })),
  );
}

/** Cells a spreadsheet would run as a formula: they get a leading `'`. */
const FORMULA_START = /^[=+\-@]/;
/** Cells that must be quoted (RFC 4180): a quote, a comma, a CR or an LF. */
const NEEDS_QUOTES = /[",\r\n]/;

/**
 * One cell: `null` is empty, booleans are `true`/`false`; a cell starting with `=`, `+`, `-` or
 * `@` gets a leading `'` (CSV injection); a cell with a quote, comma, CR or LF is quoted, its
 * quotes doubled (RFC 4180).
 */
function csvCell(value: Cell): string {
  if (value === null) return '';
  let text = String(value);
  if (FORMULA_START.test(text)) text = `'${text}`;
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
