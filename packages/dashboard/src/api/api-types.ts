// The shapes of the /v1 answers the dashboard reads, as packages/core's route schemas define them.

export interface LimitView {
  spent_usd: number;
  spent_micros: number;
  limit_usd: number | null;
  limit_micros: number | null;
  remaining_usd: number | null;
  remaining_micros: number | null;
}

/** `GET /v1/key` → data. */
export interface KeyInfo {
  id: string;
  name: string;
  prefix: string;
  scope: 'inference' | 'provisioning';
  account_id: string;
  balance_usd: number;
  balance_micros: number;
  key_spend: LimitView;
  month_to_date: LimitView & { month: string };
  rate_limit: { requests_per_minute: number; source: 'key' | 'account' | 'default' };
}

export interface UsageTotals {
  requests: number;
  errors: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  cost_micros: number;
  cost_usd: number;
  saved_micros: number;
  saved_usd: number;
  byok_requests: number;
  cache_hits: number;
}

export type DailyUsage = UsageTotals & { date: string };
export type ModelUsage = UsageTotals & { model: string | null };

/** `GET /v1/usage?days=N` → data. */
export interface Usage {
  days: number;
  since: string;
  totals: UsageTotals;
  daily: DailyUsage[];
  by_model: ModelUsage[];
  by_provider: (UsageTotals & { provider: string | null })[];
}

/** A key as `GET /v1/keys` lists it: never the secret. */
export interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  scope: 'inference' | 'provisioning';
  env: 'live' | 'test';
  project_id: string | null;
  /** Refused at authentication; a revoked key is disabled too. */
  disabled: boolean;
  /** Revoked for good: it can never be enabled again. */
  revoked: boolean;
  /** When the key stops working (OAuth client credentials), else null. */
  expires_at: string | null;
  oauth_client_id: string | null;
  spend_limit_usd: number | null;
  spend_limit_micros: number | null;
  spent_usd: number;
  spent_micros: number;
  /** The UTC window the spend limit applies to; null: the lifetime. */
  limit_reset: LimitReset | null;
  /** USD left in the current window (or of the lifetime cap); null without a cap. */
  limit_remaining: number | null;
  usage_daily: number;
  usage_weekly: number;
  usage_monthly: number;
  /** When the current window ends (ISO 8601); null without a reset. */
  limit_resets_at: string | null;
  rate_limit_rpm: number | null;
  created_at: string;
}

export type LimitReset = 'daily' | 'weekly' | 'monthly';

/** `POST /v1/keys` → data: the only answer that carries the secret. */
export type CreatedApiKey = ApiKey & { key: string };

export interface RoutingFailure {
  provider: string;
  status: number | null;
  reason: string;
}

/** A request record (`generationSchema`). */
export interface Generation {
  id: string;
  endpoint: string;
  model: string | null;
  requested_model: string | null;
  provider: string | null;
  key_id: string | null;
  project_id: string | null;
  status: string;
  http_status: number;
  error: { code: string; message: string | null } | null;
  stream: boolean;
  usage: { prompt_tokens: number; completion_tokens: number; cached_tokens: number };
  cost_micros: number;
  cost_usd: number;
  saved_micros: number;
  saved_usd: number;
  waived: string | null;
  byok: boolean;
  cache_hit: boolean;
  preset: string | null;
  ttft_ms: number | null;
  duration_ms: number | null;
  finish_reason: string | null;
  attempts: number;
  routing: { failures: RoutingFailure[] };
  attachments: Record<string, number>;
  guardrails: { rule_id: string; name: string; category: string; stage: 'input' | 'output' }[];
  metadata: Record<string, string>;
  created_at: string;
}

export interface LedgerEntry {
  id: string;
  created_at: string;
  amount_micros: number;
  amount_usd: number;
  balance_after_micros: number;
  kind: 'credit' | 'fee' | 'charge' | 'correction';
  request_id: string | null;
  description: string;
}

/** A cursor page (`{data, has_more}`) of the list endpoints. */
export interface Page<T> {
  data: T[];
  has_more: boolean;
}

/** `GET /v1/oauth/authorize?client_id=&redirect_uri=`: the client the user is asked to approve. */
export interface OAuthClientPreview {
  client_id: string;
  name: string;
  redirect_uri: string;
}
