-- A request's record (`requestRecordRow` as jsonb): a new row, or written over the same account's
-- `in_progress` record of that id (the one its reserve wrote); over a finished record it raises, so a
-- request is settled, and charged, at most once. The SET list names every column of request_records
-- but the id and the owner: a migration that adds a column adds it here too (a test compares the two).
CREATE OR REPLACE FUNCTION tollgate_write_record(p_record jsonb)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  INSERT INTO request_records SELECT * FROM jsonb_populate_record(NULL::request_records, p_record)
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
  WHERE request_records.status = 'in_progress' AND request_records.account_id = excluded.account_id;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'request % already has a finished record', p_record->>'id';
  END IF;
END
$function$;
