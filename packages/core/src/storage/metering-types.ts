import type { GuardrailVerdict } from './guardrails.js';
import type { EpochMs, Micros } from './scalars.js';

/** A hold on an account's credit for one request's worst case, released at settle or on expiry. */
export interface CreditReservation {
  id: string;
  accountId: string;
  keyId: string | null;
  requestId: string;
  amountMicros: Micros;
  createdAt: EpochMs;
  expiresAt: EpochMs;
}

export interface ReserveCreditInput {
  accountId: string;
  keyId: string;
  requestId: string;
  amountMicros: Micros;
  now: EpochMs;
  /** How long the hold lives if the process dies before settling it. */
  ttlMs: number;
  /**
   * The request's record as it stands when the hold is taken (status `in_progress`), written with
   * the hold; the settle completes it. Without it, no record is written until the settle.
   */
  record?: RequestRecord;
  /**
   * The request's rate-limit hit, counted first, as `hitRateLimit` counts it, and in the same round
   * trip where the adapter can: when refused, nothing is held and the answer is `rate_limited`; when
   * admitted, it stays counted, also when the reserve then refuses for credit.
   */
  rateLimit?: RateLimitInput;
}

export type ReserveCreditResult =
  | { ok: true; reservation: CreditReservation }
  | {
      ok: false;
      reason: 'insufficient_credit' | 'key_limit_exceeded' | 'monthly_limit_exceeded';
      /** The account's cached balance. */
      balanceMicros: Micros;
      /** What the limit that refused still allows once live holds are counted (may be negative). */
      availableMicros: Micros;
    }
  | {
      ok: false;
      reason: 'rate_limited';
      /** As `RateLimitHit.retryAfterMs`: milliseconds until a request would be admitted. */
      retryAfterMs: number;
    };

/** One provider tried and why it failed, as `routing.failures` shows it. */
export interface RoutingFailure {
  provider: string;
  status: number | null;
  /** `http_503`, `http_503 (try 2)`, `timeout`, `network_error`, … */
  reason: string;
}

/**
 * `in_progress`: the request holds credit and has not settled yet. Its record is written with the
 * hold, so a process that dies mid-request leaves it on record; the expiry sweep closes it.
 */
export type RequestStatus =
  | 'success'
  | 'error'
  | 'refused'
  | 'broken_stream'
  | 'client_closed'
  | 'replayed'
  | 'in_progress';

/** The one row per request. Never a prompt, a completion, tool arguments or a system prompt. */
export interface RequestRecord {
  id: string;
  accountId: string;
  keyId: string | null;
  projectId: string | null;
  endpoint: string;
  /** The model the caller asked for, when it differs from the one that served (else null). */
  requestedModel: string | null;
  /** The catalogue model that served (or was asked for, when nothing served). */
  model: string | null;
  provider: string | null;
  status: RequestStatus;
  httpStatus: number;
  errorCode: string | null;
  errorMessage: string | null;
  stream: boolean;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  costMicros: Micros;
  savedMicros: Micros;
  /**
   * What usage beyond the hold would have cost and was not charged (a charge never exceeds its
   * hold); 0 when the charge fit.
   */
  overrunMicros: Micros;
  waived: string | null;
  byok: boolean;
  cacheHit: boolean;
  /** The preset the request named, if any. */
  preset: string | null;
  ttftMs: number | null;
  durationMs: number | null;
  finishReason: string | null;
  attempts: number;
  routingFailures: RoutingFailure[];
  attachments: Record<string, number>;
  /** The guardrails that fired (which rule, never the matched text); empty when none did. */
  guardrails: GuardrailVerdict[];
  metadata: Record<string, string>;
  createdAt: EpochMs;
}

/** The ledger side of a settle: exactly one `charge` entry for a non-zero cost. */
export interface SettleCharge {
  amountMicros: Micros;
  description: string;
  keyId: string | null;
}

export interface SettleInput {
  /** The hold to release (null when none was taken). */
  reservationId: string | null;
  record: RequestRecord;
  /** `null` when nothing is charged (failure, refusal, waiver, free route). */
  charge: SettleCharge | null;
}

/** Aggregated request rows of one UTC day, model and provider, for `GET /usage`. */
export interface UsageRow {
  /** Days since the epoch (UTC): ⌊createdAt / 86 400 000⌋. */
  day: number;
  model: string | null;
  provider: string | null;
  requests: number;
  errors: number;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  costMicros: Micros;
  savedMicros: Micros;
  byokRequests: number;
  cacheHits: number;
}

export interface RateLimitInput {
  /** What is limited, e.g. `key:<id>`. */
  subject: string;
  /** Requests per window. */
  limit: number;
  windowMs: number;
  now: EpochMs;
}

export interface RateLimitHit {
  allowed: boolean;
  /** 0 when allowed; else milliseconds until a request would be admitted. */
  retryAfterMs: number;
}

export interface IdempotencyClaimInput {
  accountId: string;
  key: string;
  requestId: string;
  now: EpochMs;
  /** An `in_flight` claim older than this is treated as abandoned (about 5 minutes). */
  inFlightTtlMs: number;
}

export type IdempotencyClaimResult =
  | { state: 'claimed' }
  | { state: 'in_flight'; requestId: string }
  | { state: 'completed'; requestId: string; responseStatus: number; responseBody: string };

export interface IdempotencyCompletion {
  accountId: string;
  key: string;
  requestId: string;
  responseStatus: number;
  /** Opaque to storage (the gateway encrypts it). */
  responseBody: string;
  now: EpochMs;
  /** How long the completed response is replayed (24 hours). */
  ttlMs: number;
}
