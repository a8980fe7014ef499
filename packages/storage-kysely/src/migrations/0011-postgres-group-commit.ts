import type { Migration } from 'kysely/migration';
import type { DialectCapabilities } from '../dialect-capabilities.js';
import { postgresOnlyMigration } from './dialect-only.js';

/**
 * Postgres only (`dialect.nativeReserveAndSettle`; nothing on SQLite): group commit for the native
 * reserve and settle. `tollgate_reserve_credits` and `tollgate_settle_requests` take a batch of
 * calls as a `jsonb` array and run each, in the array's order, through the single-call function of
 * migration 0010 (whose logic stays the only copy), all in the one transaction of their statement,
 * so a batch pays one COMMIT (one WAL flush) where each call paid its own, and an account's row lock
 * is held for one flush per batch rather than per call.
 *
 * Each call runs in its own `BEGIN … EXCEPTION` block, a subtransaction: a call that fails (a
 * missing account, a second settle of a request, an unsafe integer) is rolled back alone and comes
 * back as its row's `error` (with its SQLSTATE in `code`), and the others commit. Rows come back
 * with the call's 0-based position in `ord`. The client caps a batch at 64 calls: each call is a
 * subtransaction with an xid, and past 64 of them the transaction's subxid cache overflows, which
 * slows every other backend's snapshots.
 *
 * One cost of the subtransactions: where a call of a batch locked an account row (the ledger
 * insert's foreign key check takes KEY SHARE) and a later call of the same batch updates it, Postgres
 * keeps the earlier lock by giving the new row version a MultiXact as its xmax. Settle batches so
 * use about one MultiXact id per settle; vacuum freezes them like xids (see
 * `autovacuum_multixact_freeze_max_age`).
 */
export function postgresGroupCommitMigration(dialect: DialectCapabilities): Migration {
  return postgresOnlyMigration(dialect, STATEMENTS);
}

/** A batch of `tollgate_reserve_credit` calls, each an object of its parameters without `p_`. */
const RESERVE_CREDITS = `CREATE FUNCTION tollgate_reserve_credits(p_calls jsonb)
RETURNS TABLE (ord integer, refusal text, balance bigint, available bigint, error text, code text)
LANGUAGE plpgsql AS $$
DECLARE
  v_call jsonb;
  v_ord bigint;
BEGIN
  FOR v_call, v_ord IN SELECT c.value, c.ordinality - 1 FROM jsonb_array_elements(p_calls) WITH ORDINALITY c LOOP
    ord := v_ord;
    refusal := NULL; balance := NULL; available := NULL; error := NULL; code := NULL;
    BEGIN
      SELECT r.refusal, r.balance, r.available INTO refusal, balance, available
        FROM tollgate_reserve_credit(
          v_call->>'account_id', v_call->>'key_id', (v_call->>'amount')::bigint,
          (v_call->>'now')::bigint, (v_call->>'month_start')::bigint, (v_call->>'month_end')::bigint,
          v_call->>'hold_id', v_call->>'request_id', (v_call->>'expires_at')::bigint,
          CASE WHEN jsonb_typeof(v_call->'record') = 'object' THEN v_call->'record' END) r;
    EXCEPTION WHEN OTHERS THEN
      error := SQLERRM;
      code := SQLSTATE;
    END;
    RETURN NEXT;
  END LOOP;
END
$$`;

/** A batch of `tollgate_settle_request` calls, each an object of its parameters without `p_`. */
const SETTLE_REQUESTS = `CREATE FUNCTION tollgate_settle_requests(p_calls jsonb)
RETURNS TABLE (ord integer, balance bigint, error text, code text)
LANGUAGE plpgsql AS $$
DECLARE
  v_call jsonb;
  v_ord bigint;
BEGIN
  FOR v_call, v_ord IN SELECT c.value, c.ordinality - 1 FROM jsonb_array_elements(p_calls) WITH ORDINALITY c LOOP
    ord := v_ord;
    balance := NULL; error := NULL; code := NULL;
    BEGIN
      SELECT s.balance INTO balance
        FROM tollgate_settle_request(
          v_call->'record', v_call->>'account_id', v_call->>'request_id', v_call->>'reservation_id',
          (v_call->>'amount')::bigint, v_call->>'ledger_id', v_call->>'description', v_call->>'key_id',
          (v_call->>'created_at')::bigint) s;
    EXCEPTION WHEN OTHERS THEN
      error := SQLERRM;
      code := SQLSTATE;
    END;
    RETURN NEXT;
  END LOOP;
END
$$`;

const STATEMENTS = [RESERVE_CREDITS, SETTLE_REQUESTS];
