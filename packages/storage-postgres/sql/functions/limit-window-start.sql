-- The start (epoch ms) of a key's limit window containing p_now, calendar-aligned in UTC as core's
-- `limitWindow`: the day's 00:00, the week's Monday 00:00 (day 0 of the epoch was a Thursday), or
-- p_month_start (the client's, as every monthly figure); NULL for any other p_reset (the lifetime).
CREATE OR REPLACE FUNCTION tollgate_limit_window_start(p_reset text, p_now bigint, p_month_start bigint)
 RETURNS bigint
 LANGUAGE sql
 IMMUTABLE
AS $function$
  SELECT CASE p_reset
    WHEN 'daily' THEN (floor(p_now / 86400000.0) * 86400000)::bigint
    WHEN 'weekly' THEN ((floor(p_now / 86400000.0) - mod(mod(floor(p_now / 86400000.0) + 3, 7) + 7, 7))
      * 86400000)::bigint
    WHEN 'monthly' THEN p_month_start
  END
$function$;
