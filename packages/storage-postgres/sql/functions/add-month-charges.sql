-- Adds each charge to its account's total for the UTC month of its `created_at`
-- (account_month_charges), in the transaction that inserts it: a statement-level trigger that sums
-- the statement's charges per account and month first, since a settle batch inserts all its entries
-- in one statement. Every writer of an account's ledger holds the account's lock, so the total is
-- exact. Its search_path is the schema it was created in, whatever the inserting session's: a charge
-- of one tenant's ledger must never add to another schema's totals.
CREATE OR REPLACE FUNCTION tollgate_add_month_charges()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path FROM CURRENT
AS $function$
BEGIN
  INSERT INTO account_month_charges (account_id, month_start, charge_total_micros)
    SELECT n.account_id,
        (extract(epoch FROM date_trunc('month', to_timestamp(n.created_at / 1000) AT TIME ZONE 'UTC')) * 1000)::bigint,
        sum(n.amount_micros)
      FROM new_entries n WHERE n.kind = 'charge' GROUP BY 1, 2
  ON CONFLICT (account_id, month_start) DO UPDATE
  SET charge_total_micros = account_month_charges.charge_total_micros + excluded.charge_total_micros;
  RETURN NULL;
END
$function$;

CREATE TRIGGER ledger_entries_month_charges AFTER INSERT ON ledger_entries
  REFERENCING NEW TABLE AS new_entries FOR EACH STATEMENT EXECUTE FUNCTION tollgate_add_month_charges();
