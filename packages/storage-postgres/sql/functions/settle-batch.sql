-- A batch of settles, set-based: the same calls and rows as `tollgate_settle_requests`, with the
-- outcome of `tollgate_settle_request` for each, but each step done once for the whole batch: the
-- records written in one upsert, the holds deleted in one statement, the accounts charged locked in
-- account order, each balance moved once by its calls' total, the ledger entries inserted in one
-- statement with each call's balance after it (the balance after the calls before it, in the batch's
-- order), each key's spend moved once, and once per UTC day its holds were taken in (`key_day_spend`;
-- the call's day for a call without a hold).
--
-- The one failure a settle expects, a record already finished, is found without raising and answered
-- for that call alone (it changes nothing, as the single call's rollback). Anything else (a missing
-- account or key, an unsafe integer) fails the whole statement, which writes nothing, and the client
-- sends the same calls to `tollgate_settle_requests`, which names each call's own error.
--
-- Sequential scans are off for it: the holds it deletes, the accounts and the keys it charges are
-- found by their primary keys, whatever the planner estimated when the session first planned the
-- statement (on a young holds table it would hash the whole table, deleted holds included, and keep
-- that plan while the table grew).
CREATE OR REPLACE FUNCTION tollgate_settle_batch(p_calls jsonb)
 RETURNS TABLE(ord integer, balance bigint, error text, code text)
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
  v_written integer[];
  v_balances jsonb;
  v_complete boolean;
  v_held_at jsonb;
BEGIN
  WITH input AS (
    SELECT (x.ordinality - 1)::integer AS i, x.value AS v FROM jsonb_array_elements(p_calls) WITH ORDINALITY x
  ), written AS (
    INSERT INTO request_records
      SELECT r.* FROM input, LATERAL jsonb_populate_record(NULL::request_records, input.v->'record') r
    ON CONFLICT (id) DO UPDATE SET
    key_id = excluded.key_id, project_id = excluded.project_id, endpoint = excluded.endpoint,
    requested_model = excluded.requested_model, model = excluded.model, provider = excluded.provider,
    status = excluded.status, http_status = excluded.http_status, error_code = excluded.error_code,
    error_message = excluded.error_message, stream = excluded.stream,
    prompt_tokens = excluded.prompt_tokens, completion_tokens = excluded.completion_tokens,
    cached_tokens = excluded.cached_tokens, cost_micros = excluded.cost_micros,
    saved_micros = excluded.saved_micros, overrun_micros = excluded.overrun_micros,
    waived = excluded.waived, byok = excluded.byok,
    cache_hit = excluded.cache_hit, preset = excluded.preset, ttft_ms = excluded.ttft_ms,
    duration_ms = excluded.duration_ms, finish_reason = excluded.finish_reason,
    attempts = excluded.attempts, routing_failures = excluded.routing_failures,
    attachments = excluded.attachments, guardrails = excluded.guardrails,
    metadata = excluded.metadata, created_at = excluded.created_at
    WHERE request_records.status = 'in_progress' AND request_records.account_id = excluded.account_id
    RETURNING request_records.id
  )
  SELECT coalesce(array_agg(input.i), '{}') INTO v_written
    FROM input WHERE input.v->'record'->>'id' IN (SELECT id FROM written);

  -- The holds deleted, and when each was taken: the day its call's charge counts in.
  WITH deleted AS (
    DELETE FROM credit_reservations h
      USING jsonb_array_elements(p_calls) WITH ORDINALITY x
      WHERE (x.ordinality - 1)::integer = ANY (v_written)
        AND h.id = x.value->>'reservation_id' AND h.account_id = x.value->>'account_id'
      RETURNING (x.ordinality - 1)::integer AS i, h.created_at
  )
  SELECT coalesce(jsonb_object_agg(d.i::text, d.created_at), '{}') INTO v_held_at FROM deleted d;

  -- The accounts charged, locked in account order (as every batch locks them).
  PERFORM 1 FROM accounts a
    WHERE a.id IN (SELECT x.value->>'account_id' FROM jsonb_array_elements(p_calls) WITH ORDINALITY x
                   WHERE (x.ordinality - 1)::integer = ANY (v_written) AND x.value->>'amount' IS NOT NULL)
    ORDER BY a.id FOR NO KEY UPDATE;

  WITH settled AS (
    SELECT (x.ordinality - 1)::integer AS i, x.value->>'account_id' AS account_id,
      x.value->>'request_id' AS request_id, (x.value->>'amount')::bigint AS amount,
      x.value->>'ledger_id' AS ledger_id, x.value->>'description' AS description,
      x.value->>'key_id' AS key_id, (x.value->>'created_at')::bigint AS created_at,
      (v_held_at->>((x.ordinality - 1)::text))::bigint AS held_at
    FROM jsonb_array_elements(p_calls) WITH ORDINALITY x
    WHERE (x.ordinality - 1)::integer = ANY (v_written)
  ), totals AS (
    SELECT s.account_id, sum(s.amount) AS total FROM settled s WHERE s.amount IS NOT NULL GROUP BY s.account_id
  ), moved AS (
    UPDATE accounts a SET balance_micros = a.balance_micros - t.total FROM totals t
      WHERE a.id = t.account_id RETURNING a.id, a.balance_micros
  ), after AS (
    -- A call's balance after it: the balance now, plus what the account's later calls took.
    SELECT s.*, coalesce(m.balance_micros, a.balance_micros)
        + coalesce(sum(s.amount) OVER (PARTITION BY s.account_id ORDER BY s.i DESC), 0)
        - coalesce(s.amount, 0) AS balance_after
      FROM settled s LEFT JOIN moved m ON m.id = s.account_id LEFT JOIN accounts a ON a.id = s.account_id
  ), ledger AS (
    INSERT INTO ledger_entries
        (id, account_id, amount_micros, balance_after_micros, kind, description, request_id, key_id, created_at)
      SELECT e.ledger_id, e.account_id, -e.amount, tollgate_safe_integer(e.balance_after), 'charge',
          e.description, e.request_id, e.key_id, e.created_at
        FROM after e WHERE e.amount IS NOT NULL ORDER BY e.i
      RETURNING 1
  ), key_totals AS (
    SELECT s.key_id, s.account_id, sum(s.amount) AS total FROM settled s
      WHERE s.amount IS NOT NULL AND s.key_id IS NOT NULL GROUP BY s.key_id, s.account_id
  ), spent AS (
    UPDATE api_keys k SET spent_micros = k.spent_micros + t.total FROM key_totals t
      WHERE k.id = t.key_id AND k.account_id = t.account_id
      RETURNING tollgate_safe_integer(k.spent_micros)
  ), day_totals AS (
    SELECT s.key_id, tollgate_utc_day_start(coalesce(s.held_at, s.created_at)) AS day_start,
        sum(s.amount) AS total
      FROM settled s WHERE s.amount IS NOT NULL AND s.key_id IS NOT NULL GROUP BY 1, 2
  ), days AS (
    INSERT INTO key_day_spend (key_id, day_start, spent_micros)
      SELECT t.key_id, t.day_start, t.total FROM day_totals t
      ON CONFLICT (key_id, day_start) DO UPDATE SET spent_micros = key_day_spend.spent_micros + excluded.spent_micros
      RETURNING 1
  )
  SELECT coalesce(jsonb_object_agg(e.i::text, tollgate_safe_integer(e.balance_after)), '{}'),
      (SELECT count(*) FROM moved) = (SELECT count(*) FROM totals)
        AND (SELECT count(*) FROM spent) = (SELECT count(*) FROM key_totals)
        AND (SELECT count(*) FROM days) = (SELECT count(*) FROM day_totals)
        AND (SELECT count(*) FROM ledger) = (SELECT count(*) FROM settled s WHERE s.amount IS NOT NULL)
        AND coalesce(bool_and(e.balance_after IS NOT NULL), true)
    INTO v_balances, v_complete
    FROM after e;
  IF NOT v_complete THEN
    -- A missing account or key: the per-call functions name it for the call it belongs to.
    RAISE EXCEPTION 'a settle of this batch names a missing account or a key of another account';
  END IF;

  RETURN QUERY
    SELECT (x.ordinality - 1)::integer, (v_balances->>((x.ordinality - 1)::text))::bigint,
      CASE WHEN NOT (v_balances ? (x.ordinality - 1)::text)
        THEN format('request %s already has a finished record', x.value->'record'->>'id') END,
      CASE WHEN NOT (v_balances ? (x.ordinality - 1)::text) THEN 'P0001' END
    FROM jsonb_array_elements(p_calls) WITH ORDINALITY x ORDER BY x.ordinality;
END
$function$;
