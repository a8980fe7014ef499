-- The ledger is append-only in the database itself: any UPDATE, DELETE or TRUNCATE of
-- ledger_entries fails, whatever code path or client tries it.
CREATE OR REPLACE FUNCTION tollgate_ledger_append_only()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  RAISE EXCEPTION 'ledger_entries is append-only' USING ERRCODE = 'restrict_violation';
END
$function$;

CREATE TRIGGER ledger_entries_no_update_delete BEFORE DELETE OR UPDATE ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION tollgate_ledger_append_only();

CREATE TRIGGER ledger_entries_no_truncate BEFORE TRUNCATE ON ledger_entries
  FOR EACH STATEMENT EXECUTE FUNCTION tollgate_ledger_append_only();
