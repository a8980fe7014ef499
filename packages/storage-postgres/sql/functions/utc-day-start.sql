-- The start (epoch ms) of the UTC day containing p_at: the day a key's charge counts in
-- (`key_day_spend`), as core's `utcDayStart`.
CREATE OR REPLACE FUNCTION tollgate_utc_day_start(p_at bigint)
 RETURNS bigint
 LANGUAGE sql
 IMMUTABLE
AS $function$
  SELECT (floor(p_at / 86400000.0) * 86400000)::bigint
$function$;
