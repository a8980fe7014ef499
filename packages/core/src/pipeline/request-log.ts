import type { AuthContext } from '../auth/authenticate.js';
import { ClientClosedError, type GatewayError } from '../errors/gateway-error.js';
import type { GatewayDeps } from '../gateway-deps.js';
import type { RequestRecord, RequestStatus } from '../storage/metering-types.js';
import type { EpochMs, Storage } from '../storage/types.js';
import type { GatewayLogger } from '../telemetry/gateway-logger.js';
import { chatRequestSpan } from '../telemetry/request-span.js';

/**
 * A request record in the making: created when the request is authenticated, filled in as the
 * request moves through its stages, and written once at the end (by settle, or as a refusal).
 * Holds counts, names and codes only, never request or response content.
 */
export function startRequestRecord(input: {
  requestId: string;
  auth: AuthContext;
  endpoint: string;
  requestedModel: string | null;
  stream: boolean;
  startedAt: EpochMs;
  /** The body's `preset` field, as it came (kept when it names one). */
  preset?: unknown;
}): RequestRecord {
  return {
    id: input.requestId,
    accountId: input.auth.account.id,
    keyId: input.auth.key.id,
    projectId: input.auth.key.projectId,
    endpoint: input.endpoint,
    requestedModel: input.requestedModel,
    model: input.requestedModel,
    provider: null,
    status: 'success',
    httpStatus: 200,
    errorCode: null,
    errorMessage: null,
    stream: input.stream,
    promptTokens: 0,
    completionTokens: 0,
    cachedTokens: 0,
    costMicros: 0,
    savedMicros: 0,
    overrunMicros: 0,
    waived: null,
    byok: false,
    cacheHit: false,
    preset: typeof input.preset === 'string' ? input.preset : null,
    ttftMs: null,
    durationMs: null,
    finishReason: null,
    attempts: 0,
    routingFailures: [],
    attachments: {},
    guardrails: [],
    metadata: {},
    createdAt: input.startedAt,
  };
}

/**
 * Marks the record failed with a gateway error: `client_closed` (status, HTTP 499 and error code,
 * product.md) when the caller left.
 */
export function failRecord(
  record: RequestRecord,
  error: GatewayError,
  status: RequestStatus = 'error',
): void {
  const clientClosed = error instanceof ClientClosedError;
  record.status = clientClosed ? 'client_closed' : status;
  record.httpStatus = clientClosed ? 499 : error.status;
  record.errorCode = clientClosed ? CLIENT_CLOSED : error.code;
  record.errorMessage = error.recordedMessage;
}

/** The status and error code of a record whose caller left before the answer ended. */
const CLIENT_CLOSED = 'client_closed';

/**
 * Sets the duration and, as the spec's record asks, keeps `requestedModel` only when it differs
 * from the model that served.
 */
export function closeRecord(record: RequestRecord, now: EpochMs): RequestRecord {
  record.durationMs = Math.max(0, now - record.createdAt);
  if (record.requestedModel === record.model) record.requestedModel = null;
  return record;
}

/**
 * The end of an inference request's record (called once per request, refusals included): tells the
 * observer, then sends the span if a collector is configured. Never awaits.
 */
export function exportRequestSpan(
  deps: Pick<GatewayDeps, 'spans' | 'observers'>,
  record: RequestRecord,
  requested: string,
  operation = 'chat',
): void {
  deps.observers.recordFinished(record);
  const sink = deps.spans;
  if (!sink) return;
  sink.export(
    chatRequestSpan({
      operation,
      requestId: record.id,
      requestedModel: requested,
      servedModel: record.provider ? record.model : null,
      provider: record.provider,
      inputTokens: record.promptTokens,
      outputTokens: record.completionTokens,
      cachedTokens: record.cachedTokens,
      finishReason: record.finishReason,
      attempts: record.attempts,
      costMicros: record.costMicros,
      ttftMs: record.ttftMs,
      durationMs: record.durationMs ?? 0,
      httpStatus: record.httpStatus,
      errorCode: record.errorCode,
      stream: record.stream,
      guardrails: record.guardrails.length > 0 ? JSON.stringify(record.guardrails) : null,
      startMs: record.createdAt,
      endMs: record.createdAt + (record.durationMs ?? 0),
    }),
  );
}

/**
 * A record written outside a settle (a refusal, a replay, a cache hit), then told to the observer
 * and the span under the model the caller asked for.
 */
export async function writeRecordAndSpan(
  deps: Pick<GatewayDeps, 'storage' | 'logger' | 'spans' | 'observers'>,
  record: RequestRecord,
  spanOperation: string,
): Promise<void> {
  await writeRequestRecord(deps.storage, deps.logger, record);
  exportRequestSpan(deps, record, record.requestedModel ?? record.model ?? 'unknown', spanOperation);
}

/**
 * Writes a record outside a settle (a refusal, a replay, or the failure a failed settle became).
 * A write that fails is logged by request id and error name; the caller's answer stands.
 */
export async function writeRequestRecord(
  storage: Storage,
  logger: GatewayLogger,
  record: RequestRecord,
): Promise<void> {
  try {
    await storage.insertRequestRecord(record);
  } catch (error) {
    logger.error(
      { requestId: record.id, err: { name: (error as Error)?.name } },
      'writing the request record failed',
    );
  }
}
