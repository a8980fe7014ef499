-- A batch of rate-limit hits (`p_calls`: a jsonb array of the client's `HitParams`), each counted in
-- the array's order with exactly the upsert `rate-limit-queries.ts` sends for one hit: the previous
-- window's count weighs on the allowance, the current window's row is inserted or counted up while it
-- is below it, and no row back means refused. Rows carry the call's 0-based position in `ord` and
-- `counted`. The client sorts a batch by subject, the lock order of every statement that counts hits.
-- No call is expected to fail: should one, the statement fails and writes nothing, and the client
-- counts each hit of the batch on its own.
CREATE OR REPLACE FUNCTION tollgate_count_hits(p_calls jsonb)
 RETURNS TABLE(ord integer, counted boolean, error text, code text)
 LANGUAGE plpgsql
AS $function$
DECLARE
  c record;
  v_subject text;
  v_start bigint;
  v_allowance bigint;
  v_count bigint;
BEGIN
  FOR c IN SELECT (x.ordinality - 1)::integer AS i, x.value AS v
             FROM jsonb_array_elements(p_calls) WITH ORDINALITY x LOOP
    ord := c.i; error := NULL; code := NULL;
    v_subject := c.v->>'subject';
    v_start := (c.v->>'windowStart')::bigint;
    -- limit - floor(previous * remaining / window), as countHit computes it.
    v_allowance := (c.v->>'limit')::bigint - coalesce((
        SELECT w.count FROM rate_limit_windows w
        WHERE w.subject = v_subject AND w.window_start = (c.v->>'previousStart')::bigint), 0)
      * (c.v->>'remainingMs')::bigint / (c.v->>'windowMs')::bigint;
    v_count := NULL;
    IF v_allowance > 0 THEN
      INSERT INTO rate_limit_windows (subject, window_start, count) VALUES (v_subject, v_start, 1)
        ON CONFLICT (subject, window_start) DO UPDATE SET count = rate_limit_windows.count + 1
          WHERE rate_limit_windows.count < v_allowance
        RETURNING rate_limit_windows.count INTO v_count;
    END IF;
    counted := v_count IS NOT NULL;
    RETURN NEXT;
  END LOOP;
END
$function$;
