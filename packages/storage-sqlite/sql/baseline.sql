-- Tollgate's SQLite schema: the tables, indexes and triggers every database file starts from
-- (migration 0001_baseline). Later migrations change it.
--
-- Money is an INTEGER of micro-dollars and time INTEGER epoch milliseconds, everywhere. Flags are
-- INTEGER 0/1, each held to those two values by a CHECK. Tables that list rows in the order they were
-- inserted (ledger entries, API keys, BYOK keys) keep SQLite's implicit `rowid` for it: they are never
-- WITHOUT ROWID, and their rows are never deleted, so it only grows.

-- A customer. `balance_micros` is the cached sum of its ledger, moved in the same transaction as each
-- entry.
CREATE TABLE accounts (
  id text NOT NULL PRIMARY KEY,
  name text NOT NULL,
  balance_micros integer NOT NULL DEFAULT 0,
  monthly_limit_micros integer,
  default_rpm integer,
  suspended integer NOT NULL DEFAULT 0,
  created_at integer NOT NULL,
  CONSTRAINT accounts_suspended_flag CHECK (suspended IN (0, 1))
);

-- A named grouping of an account's keys. The (id, account_id) pair is the target of the keys' foreign
-- key, so a key's project is always its own account's.
CREATE TABLE projects (
  id text NOT NULL PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  name text NOT NULL,
  created_at integer NOT NULL,
  CONSTRAINT projects_id_account_id_unique UNIQUE (id, account_id)
);

-- API keys: only the SHA-256 of a key and a displayable prefix, never the key. `spent_micros` is the
-- key's running total of charges, read against `spend_limit_micros` by every reserve.
CREATE TABLE api_keys (
  id text NOT NULL PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  project_id text,
  name text NOT NULL,
  scope text NOT NULL,
  env text NOT NULL,
  key_hash text NOT NULL UNIQUE,
  prefix text NOT NULL,
  spend_limit_micros integer,
  rate_limit_rpm integer,
  spent_micros integer NOT NULL DEFAULT 0,
  disabled integer NOT NULL DEFAULT 0,
  created_at integer NOT NULL,
  CONSTRAINT api_keys_project_of_account FOREIGN KEY (project_id, account_id)
    REFERENCES projects (id, account_id),
  CONSTRAINT api_keys_scope CHECK (scope IN ('inference', 'provisioning')),
  CONSTRAINT api_keys_env CHECK (env IN ('live', 'test')),
  CONSTRAINT api_keys_disabled_flag CHECK (disabled IN (0, 1))
);
-- An account's keys (the keys API's list).
CREATE INDEX api_keys_account_id_idx ON api_keys (account_id);

-- The ledger: append-only (the two triggers below), each entry with the balance after it.
CREATE TABLE ledger_entries (
  id text NOT NULL PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  amount_micros integer NOT NULL,
  balance_after_micros integer NOT NULL,
  kind text NOT NULL,
  description text NOT NULL,
  request_id text,
  key_id text,
  created_at integer NOT NULL,
  CONSTRAINT ledger_entries_amount_nonzero CHECK (amount_micros <> 0),
  CONSTRAINT ledger_entries_kind CHECK (kind IN ('credit', 'fee', 'charge', 'adjustment'))
);
CREATE TRIGGER ledger_entries_no_update BEFORE UPDATE ON ledger_entries
BEGIN
  SELECT RAISE(ABORT, 'ledger_entries is append-only');
END;
CREATE TRIGGER ledger_entries_no_delete BEFORE DELETE ON ledger_entries
BEGIN
  SELECT RAISE(ABORT, 'ledger_entries is append-only');
END;
-- An account's entries in insertion order: every index ends with the rowid, so this one is
-- (account_id, rowid). The ledger API's pages and the CLI's listing.
CREATE INDEX ledger_entries_account_order_idx ON ledger_entries (account_id);
-- At most one charge per request, whatever code path tries a second.
CREATE UNIQUE INDEX ledger_entries_one_charge_per_request ON ledger_entries (request_id)
  WHERE kind = 'charge' AND request_id IS NOT NULL;

-- Per account and UTC month (`month_start`, its first epoch ms), the sum of that month's charge
-- entries, negative like them: what a monthly ceiling is checked against, one row instead of a sum
-- over the month's ledger. Kept by the trigger below, in the transaction that inserts the charge.
CREATE TABLE account_month_charges (
  account_id text NOT NULL,
  month_start integer NOT NULL,
  charge_total_micros integer NOT NULL,
  PRIMARY KEY (account_id, month_start)
);
CREATE TRIGGER ledger_entries_month_charges AFTER INSERT ON ledger_entries WHEN NEW.kind = 'charge'
BEGIN
  INSERT INTO account_month_charges (account_id, month_start, charge_total_micros)
    VALUES (NEW.account_id,
      CAST(strftime('%s', NEW.created_at / 1000, 'unixepoch', 'start of month') AS INTEGER) * 1000,
      NEW.amount_micros)
  ON CONFLICT (account_id, month_start) DO UPDATE
    SET charge_total_micros = account_month_charges.charge_total_micros + excluded.charge_total_micros;
END;

-- One row per request from its hold on (never its content): written `in_progress` by the reserve,
-- rewritten once by the settle (only an `in_progress` record may be), closed by the expiry sweep when
-- its process died. JSON columns are TEXT. No index names `status`: the sweep finds the records of
-- dead requests through their expired holds, and each settle writes one index fewer.
CREATE TABLE request_records (
  id text NOT NULL PRIMARY KEY,
  account_id text NOT NULL,
  key_id text,
  project_id text,
  endpoint text NOT NULL DEFAULT 'chat.completions',
  requested_model text,
  model text,
  provider text,
  status text NOT NULL,
  http_status integer NOT NULL,
  error_code text,
  error_message text,
  stream integer NOT NULL DEFAULT 0,
  prompt_tokens integer NOT NULL DEFAULT 0,
  completion_tokens integer NOT NULL DEFAULT 0,
  cached_tokens integer NOT NULL DEFAULT 0,
  cost_micros integer NOT NULL DEFAULT 0,
  saved_micros integer NOT NULL DEFAULT 0,
  waived text,
  byok integer NOT NULL DEFAULT 0,
  cache_hit integer NOT NULL DEFAULT 0,
  preset text,
  ttft_ms integer,
  duration_ms integer,
  finish_reason text,
  attempts integer NOT NULL DEFAULT 0,
  routing_failures text NOT NULL DEFAULT '[]',
  attachments text NOT NULL DEFAULT '{}',
  guardrails text NOT NULL DEFAULT '[]',
  metadata text NOT NULL DEFAULT '{}',
  created_at integer NOT NULL,
  CONSTRAINT request_records_status CHECK (status IN ('success', 'error', 'refused', 'broken_stream',
    'client_closed', 'replayed', 'in_progress')),
  CONSTRAINT request_records_stream_flag CHECK (stream IN (0, 1)),
  CONSTRAINT request_records_byok_flag CHECK (byok IN (0, 1)),
  CONSTRAINT request_records_cache_hit_flag CHECK (cache_hit IN (0, 1))
);
-- An account's records newest first by (created_at, id): usage, the CSV export's keyset pages.
CREATE INDEX request_records_account_created_id_idx ON request_records (account_id, created_at, id);

-- Credit held for requests in flight: each reserve inserts one, its settle deletes it, and one that
-- outlives its `expires_at` (its process died) no longer counts and is swept. Every b-tree a hold
-- lives in is a page each commit group writes to the WAL again, so there are two: the table itself
-- (WITHOUT ROWID, so the primary key is the table) and the index below. The expiry sweep reads the
-- whole table, which only holds the requests in flight and what the last sweep left.
CREATE TABLE credit_reservations (
  id text NOT NULL PRIMARY KEY,
  account_id text NOT NULL,
  key_id text,
  request_id text,
  amount_micros integer NOT NULL,
  created_at integer NOT NULL,
  expires_at integer NOT NULL
) WITHOUT ROWID;
-- An account's live holds are those expiring after now: one range of this index, read without the
-- table (the key and the amount are in it).
CREATE INDEX credit_reservations_account_expires_idx
  ON credit_reservations (account_id, expires_at, key_id, amount_micros);

-- Idempotency-Key claims, one per (account, key), the completed response sealed.
CREATE TABLE idempotency_claims (
  account_id text NOT NULL,
  idem_key text NOT NULL,
  state text NOT NULL,
  request_id text NOT NULL,
  response_status integer,
  response_body text,
  created_at integer NOT NULL,
  expires_at integer NOT NULL,
  PRIMARY KEY (account_id, idem_key),
  CONSTRAINT idempotency_claims_state CHECK (state IN ('in_flight', 'completed'))
);

-- The per-key rate limit's counters, one per subject and fixed window.
CREATE TABLE rate_limit_windows (
  subject text NOT NULL,
  window_start integer NOT NULL,
  count integer NOT NULL,
  PRIMARY KEY (subject, window_start)
);

-- At most one row (id 1), upserted by `/healthz` to learn whether the database commits a write.
CREATE TABLE health_probe (
  id integer NOT NULL PRIMARY KEY,
  probed_at integer NOT NULL
);

-- An account's own provider keys (BYOK), sealed.
CREATE TABLE byok_keys (
  id text NOT NULL PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  provider text NOT NULL,
  label text,
  allow_fallback integer NOT NULL,
  sealed_key text NOT NULL,
  created_at integer NOT NULL,
  CONSTRAINT byok_keys_allow_fallback_flag CHECK (allow_fallback IN (0, 1))
);
-- An account's keys: their list, and the count the authentication reads.
CREATE INDEX byok_keys_account_id_idx ON byok_keys (account_id);

-- Named request configuration, a JSON object as TEXT, one per (account, name).
CREATE TABLE presets (
  account_id text NOT NULL REFERENCES accounts (id),
  name text NOT NULL,
  description text,
  config text NOT NULL,
  created_at integer NOT NULL,
  updated_at integer NOT NULL,
  PRIMARY KEY (account_id, name)
);

-- Cached answers, sealed, one per (account, lookup id), live while `expires_at` is after now.
CREATE TABLE response_cache (
  account_id text NOT NULL REFERENCES accounts (id),
  lookup_id text NOT NULL,
  sealed_body text NOT NULL,
  created_at integer NOT NULL,
  expires_at integer NOT NULL,
  PRIMARY KEY (account_id, lookup_id)
);
-- The expiry sweep.
CREATE INDEX response_cache_expires_at_idx ON response_cache (expires_at);

-- Batches, one row each with its counts; `metadata` is a JSON object as TEXT or NULL.
CREATE TABLE batches (
  id text NOT NULL PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  api_key_id text NOT NULL REFERENCES api_keys (id),
  endpoint text NOT NULL,
  status text NOT NULL,
  total integer NOT NULL,
  completed integer NOT NULL DEFAULT 0,
  failed integer NOT NULL DEFAULT 0,
  metadata text,
  created_at integer NOT NULL,
  in_progress_at integer,
  completed_at integer,
  cancelled_at integer
);
-- An account's batches newest first, and the position of a page's `after` cursor.
CREATE INDEX batches_account_created_idx ON batches (account_id, created_at, id);
-- The claim's walk through the batches with work to hand out, oldest first. The item and batch
-- indexes are partial on the states the claim asks for, so they stay small however many items have
-- finished; the queries name the state as a literal so that the planner can use them.
CREATE INDEX batches_in_progress_idx ON batches (created_at, id) WHERE status = 'in_progress';

-- A batch's items, keyed by (batch, index), each with the lease of the worker running it. The primary
-- key also pages through a batch's finished items in index order.
CREATE TABLE batch_items (
  batch_id text NOT NULL REFERENCES batches (id),
  idx integer NOT NULL,
  custom_id text NOT NULL,
  request_id text NOT NULL,
  sealed_body text NOT NULL,
  state text NOT NULL,
  lease_owner text,
  lease_until integer,
  attempts integer NOT NULL DEFAULT 0,
  sealed_result text,
  finished_at integer,
  PRIMARY KEY (batch_id, idx)
);
-- A batch's queued items in index order: what the claim hands out next, and "has it work left".
CREATE INDEX batch_items_queued_idx ON batch_items (batch_id, idx) WHERE state = 'queued';
-- Running items by lease expiry: the claim takes back those whose worker stopped renewing.
CREATE INDEX batch_items_running_lease_idx ON batch_items (lease_until) WHERE state = 'running';
-- A batch's running items: "has it work left", with the queued ones.
CREATE INDEX batch_items_running_batch_idx ON batch_items (batch_id) WHERE state = 'running';

-- An account's registered OAuth clients; `redirect_uris` is a JSON array as TEXT, the secret only
-- as its SHA-256.
CREATE TABLE oauth_clients (
  id text NOT NULL PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  name text NOT NULL,
  redirect_uris text NOT NULL,
  secret_hash text NOT NULL,
  created_at integer NOT NULL
);
-- An account's clients, oldest first.
CREATE INDEX oauth_clients_account_created_idx ON oauth_clients (account_id, created_at, id);

-- Approved authorization codes, by the SHA-256 of the code (never the code), with the key their
-- redemption minted.
CREATE TABLE oauth_codes (
  code_hash text NOT NULL PRIMARY KEY,
  client_id text NOT NULL REFERENCES oauth_clients (id),
  account_id text NOT NULL REFERENCES accounts (id),
  redirect_uri text NOT NULL,
  code_challenge text NOT NULL,
  spend_limit_micros integer,
  created_at integer NOT NULL,
  expires_at integer NOT NULL,
  used_at integer,
  key_id text REFERENCES api_keys (id)
);
-- Deleting a client deletes its codes.
CREATE INDEX oauth_codes_client_id_idx ON oauth_codes (client_id);
-- The expiry sweep.
CREATE INDEX oauth_codes_expires_at_idx ON oauth_codes (expires_at);

-- An account's guardrails; `pattern` only for `regex` and `keyword`.
CREATE TABLE guardrails (
  id text NOT NULL PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  name text NOT NULL,
  stage text NOT NULL,
  category text NOT NULL,
  pattern text,
  created_at integer NOT NULL
);
-- An account's rules oldest first, and the count the authentication reads.
CREATE INDEX guardrails_account_created_idx ON guardrails (account_id, created_at, id);
