import type { Migration } from 'kysely/migration';
import type { DialectCapabilities } from '../dialect-capabilities.js';
import { postgresOnlyMigration } from './dialect-only.js';

/**
 * Postgres only (`dialect.nativeReserveAndSettle`; nothing on SQLite): `reserveCredit` and
 * `settleRequest` as server-side functions, so each is ONE statement, one round trip and its own
 * transaction (autocommit), instead of five and seven round trips with the account's row lock held
 * across them. Each does exactly what the kysely transaction of `reservation-queries.ts` /
 * `settle-queries.ts` does, in the same order with the same locks; the TS keeps the input checks,
 * the ids and the clock (`native-metering-queries.ts`). A VOLATILE plpgsql function takes a fresh
 * snapshot per statement under READ COMMITTED, so the live-holds read after the account's lock
 * sees what the writer it waited for committed, as it does from the client.
 *
 * `tollgate_write_record` names every `request_records` column but `id` and `account_id`: a
 * migration that adds a record column must replace it (a test compares it with the table).
 */
export function postgresHotPathMigration(dialect: DialectCapabilities): Migration {
  return postgresOnlyMigration(dialect, STATEMENTS);
}

/** A database integer the client would refuse (`toInteger`) refused here, before anything is written. */
const SAFE_INTEGER = `CREATE FUNCTION tollgate_safe_integer(v numeric) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  IF v IS NULL OR v < -9007199254740991 OR v > 9007199254740991 THEN
    RAISE EXCEPTION 'expected a safe integer from the database, got %', coalesce(v::text, 'null')
      USING ERRCODE = 'numeric_value_out_of_range';
  END IF;
  RETURN v;
END
$$`;

/**
 * The SET list of a record's upsert over its `in_progress` row: every column but the id and the
 * owner (a test compares it with the table). 0013's set-based settle writes records with it too.
 */
export const REWRITE_RECORD = `    key_id = excluded.key_id, project_id = excluded.project_id, endpoint = excluded.endpoint,
    requested_model = excluded.requested_model, model = excluded.model, provider = excluded.provider,
    status = excluded.status, http_status = excluded.http_status, error_code = excluded.error_code,
    error_message = excluded.error_message, stream = excluded.stream,
    prompt_tokens = excluded.prompt_tokens, completion_tokens = excluded.completion_tokens,
    cached_tokens = excluded.cached_tokens, cost_micros = excluded.cost_micros,
    saved_micros = excluded.saved_micros, waived = excluded.waived, byok = excluded.byok,
    cache_hit = excluded.cache_hit, preset = excluded.preset, ttft_ms = excluded.ttft_ms,
    duration_ms = excluded.duration_ms, finish_reason = excluded.finish_reason,
    attempts = excluded.attempts, routing_failures = excluded.routing_failures,
    attachments = excluded.attachments, guardrails = excluded.guardrails,
    metadata = excluded.metadata, created_at = excluded.created_at`;

/** `writeRecord`: a new record, or over the same account's `in_progress` record of that id; else an error. */
const WRITE_RECORD = `CREATE FUNCTION tollgate_write_record(p_record jsonb) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO request_records SELECT * FROM jsonb_populate_record(NULL::request_records, p_record)
  ON CONFLICT (id) DO UPDATE SET
${REWRITE_RECORD}
  WHERE request_records.status = 'in_progress' AND request_records.account_id = excluded.account_id;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'request % already has a finished record', p_record->>'id';
  END IF;
END
$$`;

/**
 * `reserveCredit`: the account's row lock first (joined to the key), then the live holds, the key's
 * spend and (with a monthly ceiling) the month's charges in a statement of their own, the checks
 * in the client's order, then the hold and the `in_progress` record. A refusal writes nothing and
 * returns its reason and figures; a hold returns `refusal` NULL.
 */
export const RESERVE_CREDIT = `CREATE FUNCTION tollgate_reserve_credit(
  p_account_id text, p_key_id text, p_amount bigint, p_now bigint, p_month_start bigint,
  p_month_end bigint, p_hold_id text, p_request_id text, p_expires_at bigint, p_record jsonb,
  OUT refusal text, OUT balance bigint, OUT available bigint)
LANGUAGE plpgsql AS $$
DECLARE
  v_monthly numeric;
  v_key_limit numeric;
  v_held_account numeric;
  v_held_key numeric;
  v_key_spent numeric;
  v_month numeric;
BEGIN
  SELECT a.balance_micros, a.monthly_limit_micros, k.spend_limit_micros
    INTO balance, v_monthly, v_key_limit
    FROM accounts a JOIN api_keys k ON k.account_id = a.id
    WHERE a.id = p_account_id AND k.id = p_key_id
    FOR UPDATE OF a;
  IF NOT FOUND THEN
    IF EXISTS (SELECT 1 FROM accounts WHERE id = p_account_id) THEN
      RAISE EXCEPTION 'key % is not a key of account %', p_key_id, p_account_id;
    END IF;
    RAISE EXCEPTION 'account % does not exist', p_account_id;
  END IF;
  balance := tollgate_safe_integer(balance);
  IF v_monthly IS NOT NULL THEN v_monthly := tollgate_safe_integer(v_monthly); END IF;

  SELECT coalesce(sum(amount_micros), 0),
         coalesce(sum(CASE WHEN key_id = p_key_id THEN amount_micros ELSE 0 END), 0),
         (SELECT spent_micros FROM api_keys WHERE id = p_key_id),
         CASE WHEN v_monthly IS NULL THEN 0 ELSE (
           SELECT coalesce(sum(amount_micros), 0) FROM ledger_entries
           WHERE account_id = p_account_id AND kind = 'charge'
             AND created_at >= p_month_start AND created_at < p_month_end) END
    INTO v_held_account, v_held_key, v_key_spent, v_month
    FROM credit_reservations
    WHERE account_id = p_account_id AND expires_at > p_now;
  v_held_account := tollgate_safe_integer(v_held_account);
  v_held_key := tollgate_safe_integer(v_held_key);

  IF balance - v_held_account < p_amount THEN
    refusal := 'insufficient_credit';
    available := balance - v_held_account;
    RETURN;
  END IF;
  IF v_key_limit IS NOT NULL THEN
    available := tollgate_safe_integer(v_key_limit) - tollgate_safe_integer(v_key_spent) - v_held_key;
    IF p_amount > available THEN
      refusal := 'key_limit_exceeded';
      RETURN;
    END IF;
  END IF;
  IF v_monthly IS NOT NULL THEN
    available := v_monthly + tollgate_safe_integer(v_month) - v_held_account;
    IF p_amount > available THEN
      refusal := 'monthly_limit_exceeded';
      RETURN;
    END IF;
  END IF;

  INSERT INTO credit_reservations (id, account_id, key_id, request_id, amount_micros, created_at, expires_at)
    VALUES (p_hold_id, p_account_id, p_key_id, p_request_id, p_amount, p_now, p_expires_at);
  IF p_record IS NOT NULL THEN PERFORM tollgate_write_record(p_record); END IF;
  available := NULL;
END
$$`;

/**
 * `settleRequest`: the record (a second settle fails here, first), the hold, then the account's
 * lock last: with a charge the balance update, the ledger entry and the key's spend; without one,
 * the balance read. Returns the balance after.
 */
const SETTLE_REQUEST = `CREATE FUNCTION tollgate_settle_request(
  p_record jsonb, p_account_id text, p_request_id text, p_reservation_id text, p_amount bigint,
  p_ledger_id text, p_description text, p_key_id text, p_created_at bigint, OUT balance bigint)
LANGUAGE plpgsql AS $$
DECLARE
  v_spent bigint;
BEGIN
  PERFORM tollgate_write_record(p_record);
  IF p_reservation_id IS NOT NULL THEN
    DELETE FROM credit_reservations WHERE id = p_reservation_id AND account_id = p_account_id;
  END IF;
  IF p_amount IS NULL THEN
    SELECT balance_micros INTO balance FROM accounts WHERE id = p_account_id;
    IF NOT FOUND THEN RAISE EXCEPTION 'account % does not exist', p_account_id; END IF;
    balance := tollgate_safe_integer(balance);
    RETURN;
  END IF;

  UPDATE accounts SET balance_micros = balance_micros - p_amount WHERE id = p_account_id
    RETURNING balance_micros INTO balance;
  IF NOT FOUND THEN RAISE EXCEPTION 'account % does not exist', p_account_id; END IF;
  balance := tollgate_safe_integer(balance);
  INSERT INTO ledger_entries
      (id, account_id, amount_micros, balance_after_micros, kind, description, request_id, key_id, created_at)
    VALUES (p_ledger_id, p_account_id, -p_amount, balance, 'charge', p_description, p_request_id, p_key_id,
      p_created_at);
  IF p_key_id IS NOT NULL THEN
    UPDATE api_keys SET spent_micros = spent_micros + p_amount
      WHERE id = p_key_id AND account_id = p_account_id
      RETURNING spent_micros INTO v_spent;
    IF NOT FOUND THEN RAISE EXCEPTION 'key % is not a key of account %', p_key_id, p_account_id; END IF;
    PERFORM tollgate_safe_integer(v_spent);
  END IF;
END
$$`;

const STATEMENTS = [SAFE_INTEGER, WRITE_RECORD, RESERVE_CREDIT, SETTLE_REQUEST];
