-- A database integer the client would refuse (`toInteger`: beyond ±(2^53 - 1), or NULL) refused here
-- instead, before anything is written, so that a balance or a spend past what JavaScript holds exactly
-- fails its statement rather than being read back rounded.
CREATE OR REPLACE FUNCTION tollgate_safe_integer(v numeric)
 RETURNS bigint
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
BEGIN
  IF v IS NULL OR v < -9007199254740991 OR v > 9007199254740991 THEN
    RAISE EXCEPTION 'expected a safe integer from the database, got %', coalesce(v::text, 'null')
      USING ERRCODE = 'numeric_value_out_of_range';
  END IF;
  RETURN v;
END
$function$;
