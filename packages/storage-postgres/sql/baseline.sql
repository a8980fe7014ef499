-- Tollgate's Postgres schema: the tables and indexes every database starts from (migration
-- 0001_baseline). Later migrations change it; the server-side functions and the triggers that call
-- them are not here but in `functions/`, applied after the migrations whenever their text changes.
--
-- Money is BIGINT micro-dollars and time BIGINT epoch milliseconds, everywhere. Every statement runs
-- in the schema the storage was opened on (its search_path), so tenants and tests side by side in one
-- database never see each other's rows.

-- A customer. `balance_micros` is the cached sum of its ledger, moved in the same transaction as each
-- entry; every writer of an account's money (reserve, settle, ledger append) locks this row first.
CREATE TABLE accounts (
  id text PRIMARY KEY,
  name text NOT NULL,
  balance_micros bigint NOT NULL DEFAULT 0,
  monthly_limit_micros bigint,
  default_rpm integer,
  suspended boolean NOT NULL DEFAULT false,
  created_at bigint NOT NULL
);

-- A named grouping of an account's keys. The (id, account_id) pair is the target of the keys' foreign
-- key, so a key's project is always its own account's.
CREATE TABLE projects (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  name text NOT NULL,
  created_at bigint NOT NULL,
  CONSTRAINT projects_id_account_id_unique UNIQUE (id, account_id)
);

-- API keys: only the SHA-256 of a key and a displayable prefix, never the key. `spent_micros` is the
-- key's running total of charges, read against `spend_limit_micros` by every reserve; `seq` orders keys
-- by creation, since ids are random and creation times can tie.
CREATE TABLE api_keys (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  project_id text,
  name text NOT NULL,
  scope text NOT NULL,
  env text NOT NULL,
  key_hash text NOT NULL UNIQUE,
  prefix text NOT NULL,
  spend_limit_micros bigint,
  rate_limit_rpm integer,
  spent_micros bigint NOT NULL DEFAULT 0,
  disabled boolean NOT NULL DEFAULT false,
  created_at bigint NOT NULL,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  CONSTRAINT api_keys_project_of_account FOREIGN KEY (project_id, account_id)
    REFERENCES projects (id, account_id),
  CONSTRAINT api_keys_scope CHECK (scope IN ('inference', 'provisioning')),
  CONSTRAINT api_keys_env CHECK (env IN ('live', 'test'))
);
-- An account's keys (the keys API's list).
CREATE INDEX api_keys_account_id_idx ON api_keys (account_id);

-- The ledger: append-only (`functions/ledger-append-only.sql` rejects UPDATE, DELETE and TRUNCATE),
-- each entry with the balance after it. `seq` is the insertion order: appends to one account hold its
-- row lock, so its entries' `seq` follows the order of the balance chain.
CREATE TABLE ledger_entries (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  amount_micros bigint NOT NULL,
  balance_after_micros bigint NOT NULL,
  kind text NOT NULL,
  description text NOT NULL,
  request_id text,
  key_id text,
  created_at bigint NOT NULL,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  CONSTRAINT ledger_entries_amount_nonzero CHECK (amount_micros <> 0),
  CONSTRAINT ledger_entries_kind CHECK (kind IN ('credit', 'fee', 'charge', 'adjustment'))
);
-- An account's entries in insertion order: the ledger API's pages and the CLI's listing.
CREATE INDEX ledger_entries_account_order_idx ON ledger_entries (account_id, seq);
-- At most one charge per request, whatever code path tries a second.
CREATE UNIQUE INDEX ledger_entries_one_charge_per_request ON ledger_entries (request_id)
  WHERE kind = 'charge' AND request_id IS NOT NULL;

-- Per account and UTC month (`month_start`, its first epoch ms), the sum of that month's charge
-- entries, negative like them: what a monthly ceiling is checked against, one row instead of a sum
-- over the month's ledger. Kept by `functions/add-month-charges.sql`, a trigger of the ledger.
CREATE TABLE account_month_charges (
  account_id text NOT NULL,
  month_start bigint NOT NULL,
  charge_total_micros bigint NOT NULL,
  PRIMARY KEY (account_id, month_start)
);

-- One row per request from its hold on (never its content): written `in_progress` by the reserve,
-- rewritten once by the settle (only an `in_progress` record may be), closed by the expiry sweep when
-- its process died. JSON columns are TEXT. No index names `status`, and each page keeps 30 % free
-- (fillfactor 70): the settle's rewrite then changes no indexed column and finds room on the record's
-- own page, so it is a HOT update that adds nothing to the table's indexes.
CREATE TABLE request_records (
  id text PRIMARY KEY,
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
  stream boolean NOT NULL DEFAULT false,
  prompt_tokens integer NOT NULL DEFAULT 0,
  completion_tokens integer NOT NULL DEFAULT 0,
  cached_tokens integer NOT NULL DEFAULT 0,
  cost_micros bigint NOT NULL DEFAULT 0,
  saved_micros bigint NOT NULL DEFAULT 0,
  waived text,
  byok boolean NOT NULL DEFAULT false,
  cache_hit boolean NOT NULL DEFAULT false,
  preset text,
  ttft_ms integer,
  duration_ms integer,
  finish_reason text,
  attempts integer NOT NULL DEFAULT 0,
  routing_failures text NOT NULL DEFAULT '[]',
  attachments text NOT NULL DEFAULT '{}',
  guardrails text NOT NULL DEFAULT '[]',
  metadata text NOT NULL DEFAULT '{}',
  created_at bigint NOT NULL,
  CONSTRAINT request_records_status CHECK (status IN ('success', 'error', 'refused', 'broken_stream',
    'client_closed', 'replayed', 'in_progress'))
) WITH (fillfactor = 70);
-- An account's records newest first by (created_at, id): usage, the CSV export's keyset pages.
CREATE INDEX request_records_account_created_id_idx ON request_records (account_id, created_at, id);

-- Credit held for requests in flight: each reserve inserts one, its settle deletes it, and one that
-- outlives its `expires_at` (its process died) no longer counts and is swept.
CREATE TABLE credit_reservations (
  id text PRIMARY KEY,
  account_id text NOT NULL,
  key_id text,
  request_id text,
  amount_micros bigint NOT NULL,
  created_at bigint NOT NULL,
  expires_at bigint NOT NULL
);
-- The expiry sweep's expired holds.
CREATE INDEX credit_reservations_expires_at_idx ON credit_reservations (expires_at);
-- An account's live holds are those expiring after now: one range of this index, read without the
-- table (the key and the amount are in it). Created after the sweep's: where the planner's estimates
-- of the two tie (a young or emptied table), it takes the index created last.
CREATE INDEX credit_reservations_account_expires_idx ON credit_reservations (account_id, expires_at)
  INCLUDE (key_id, amount_micros);

-- Idempotency-Key claims, one per (account, key), the completed response sealed.
CREATE TABLE idempotency_claims (
  account_id text NOT NULL,
  idem_key text NOT NULL,
  state text NOT NULL,
  request_id text NOT NULL,
  response_status integer,
  response_body text,
  created_at bigint NOT NULL,
  expires_at bigint NOT NULL,
  PRIMARY KEY (account_id, idem_key),
  CONSTRAINT idempotency_claims_state CHECK (state IN ('in_flight', 'completed'))
);

-- The per-key rate limit's counters, one per subject and fixed window. UNLOGGED: a transaction that
-- writes only unlogged tables commits without waiting for a WAL flush, so one key's hits do not queue
-- on the disk. A crash of the server empties the table and replicas do not have it: every key then
-- starts a fresh minute. No money is ever in it.
CREATE UNLOGGED TABLE rate_limit_windows (
  subject text NOT NULL,
  window_start bigint NOT NULL,
  count integer NOT NULL,
  PRIMARY KEY (subject, window_start)
);

-- At most one row (id 1), upserted by `/healthz` to learn whether the database commits a write.
CREATE TABLE health_probe (
  id integer PRIMARY KEY,
  probed_at bigint NOT NULL
);

-- An account's own provider keys (BYOK), sealed; `seq` lists them in the order they were created.
CREATE TABLE byok_keys (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  provider text NOT NULL,
  label text,
  allow_fallback boolean NOT NULL,
  sealed_key text NOT NULL,
  created_at bigint NOT NULL,
  seq bigint GENERATED ALWAYS AS IDENTITY
);
-- An account's keys: their list, and the count the authentication reads.
CREATE INDEX byok_keys_account_id_idx ON byok_keys (account_id);

-- Named request configuration, a JSON object as TEXT, one per (account, name).
CREATE TABLE presets (
  account_id text NOT NULL REFERENCES accounts (id),
  name text NOT NULL,
  description text,
  config text NOT NULL,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  PRIMARY KEY (account_id, name)
);

-- Cached answers, sealed, one per (account, lookup id), live while `expires_at` is after now.
CREATE TABLE response_cache (
  account_id text NOT NULL REFERENCES accounts (id),
  lookup_id text NOT NULL,
  sealed_body text NOT NULL,
  created_at bigint NOT NULL,
  expires_at bigint NOT NULL,
  PRIMARY KEY (account_id, lookup_id)
);
-- The expiry sweep.
CREATE INDEX response_cache_expires_at_idx ON response_cache (expires_at);

-- Batches, one row each with its counts; `metadata` is a JSON object as TEXT or NULL.
CREATE TABLE batches (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  api_key_id text NOT NULL REFERENCES api_keys (id),
  endpoint text NOT NULL,
  status text NOT NULL,
  total integer NOT NULL,
  completed integer NOT NULL DEFAULT 0,
  failed integer NOT NULL DEFAULT 0,
  metadata text,
  created_at bigint NOT NULL,
  in_progress_at bigint,
  completed_at bigint,
  cancelled_at bigint
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
  lease_until bigint,
  attempts integer NOT NULL DEFAULT 0,
  sealed_result text,
  finished_at bigint,
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
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  name text NOT NULL,
  redirect_uris text NOT NULL,
  secret_hash text NOT NULL,
  created_at bigint NOT NULL
);
-- An account's clients, oldest first.
CREATE INDEX oauth_clients_account_created_idx ON oauth_clients (account_id, created_at, id);

-- Approved authorization codes, by the SHA-256 of the code (never the code), with the key their
-- redemption minted.
CREATE TABLE oauth_codes (
  code_hash text PRIMARY KEY,
  client_id text NOT NULL REFERENCES oauth_clients (id),
  account_id text NOT NULL REFERENCES accounts (id),
  redirect_uri text NOT NULL,
  code_challenge text NOT NULL,
  spend_limit_micros bigint,
  created_at bigint NOT NULL,
  expires_at bigint NOT NULL,
  used_at bigint,
  key_id text REFERENCES api_keys (id)
);
-- Deleting a client deletes its codes.
CREATE INDEX oauth_codes_client_id_idx ON oauth_codes (client_id);
-- The expiry sweep.
CREATE INDEX oauth_codes_expires_at_idx ON oauth_codes (expires_at);

-- An account's guardrails; `pattern` only for `regex` and `keyword`.
CREATE TABLE guardrails (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  name text NOT NULL,
  stage text NOT NULL,
  category text NOT NULL,
  pattern text,
  created_at bigint NOT NULL
);
-- An account's rules oldest first, and the count the authentication reads.
CREATE INDEX guardrails_account_created_idx ON guardrails (account_id, created_at, id);
