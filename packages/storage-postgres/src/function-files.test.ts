import type { PGlite } from '@electric-sql/pglite';
import { Kysely, PGliteDialect } from 'kysely';
import { describe, expect, it } from 'vitest';
import { applyFunctionFiles, type FunctionFile, functionFile, readFunctionFiles } from './function-files.js';
import { postgresTestBed } from './harness-variants.test-support.js';
import { createPgliteStorage } from './index.js';
import { quoteIdentifier, useSchema } from './migrate-postgres.js';
import { randomSchema } from './test-harness.js';

/*
 * The functions the server runs are the files of `sql/functions/`, as written: a fresh schema, once
 * migrated, holds exactly the files' functions and triggers, and each function's definition in the
 * catalog (`pg_get_functiondef`) is its file's CREATE statement. And the step that applies them runs
 * a file again only when its text changed.
 */

const { variants, cleanups, sharedPglite } = postgresTestBed();
const FILES = readFunctionFiles();

/**
 * A function's or trigger's definition with what the catalog adds set aside: the schema that
 * qualifies its names, the schema a `SET search_path FROM CURRENT` was resolved to, the layout of
 * the header (the parameter list and clauses may wrap in a file). A function's body, between its
 * `$function$` quotes, is compared as it is.
 */
function normalised(definition: string, schema: string): string {
  const text = definition.replace(/^(\s*--[^\n]*\n)*/, '');
  const bodyAt = text.indexOf('AS $function$');
  const header = bodyAt === -1 ? text : text.slice(0, bodyAt);
  const body = bodyAt === -1 ? '' : text.slice(bodyAt).trimEnd();
  const unqualified = header
    .replaceAll(`${quoteIdentifier(schema)}.`, '')
    .replaceAll(`${schema}.`, '')
    .replace(`SET search_path TO '${schema}'`, 'SET search_path FROM CURRENT')
    .replace(/\s+/g, ' ')
    .replace(/\(\s+/g, '(')
    .replace(/\s+\)/g, ')')
    .trim();
  return body === '' ? unqualified : `${unqualified}\n${body}`;
}

for (const variant of variants) {
  describe.skipIf(variant.skip !== undefined)(`the function files on ${variant.name}`, () => {
    it("a fresh schema holds exactly the files' functions, each defined as its file has it", async () => {
      const { raw } = await variant.open();
      const [{ schema } = {}] = await raw('SELECT current_schema() AS schema');
      const rows = await raw(
        `SELECT p.proname AS name, pg_get_functiondef(p.oid) AS definition FROM pg_proc p
          WHERE p.pronamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())
          ORDER BY p.proname`,
      );
      expect(rows.map((row) => row.name)).toEqual(FILES.map((file) => file.name).sort());
      for (const file of FILES) {
        const running = rows.find((row) => row.name === file.name);
        expect(normalised(String(running?.definition), String(schema)), file.file).toBe(
          normalised(file.statements[0]!, String(schema)),
        );
      }
      expect(rows.length).toBeGreaterThanOrEqual(13);
    });

    it("a fresh schema holds exactly the files' triggers, each as its file creates it", async () => {
      const { raw } = await variant.open();
      const [{ schema } = {}] = await raw('SELECT current_schema() AS schema');
      const rows = await raw(
        `SELECT pg_get_triggerdef(t.oid) AS definition FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
          WHERE c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())
            AND NOT t.tgisinternal`,
      );
      const running = rows.map((row) => normalised(String(row.definition), String(schema))).sort();
      const written = FILES.flatMap((file) => file.statements.filter((s) => /^\s*CREATE TRIGGER/m.test(s)))
        .map((statement) => normalised(statement, String(schema)))
        .sort();
      expect(running).toEqual(written);
      expect(running).toHaveLength(3);
    });
  });
}

/** A schema on the shared PGlite, set up by the storage, and a kysely on it for the step itself. */
async function migratedSchema(): Promise<{ pglite: PGlite; db: Kysely<unknown>; schema: string }> {
  const pglite = await sharedPglite();
  const schema = randomSchema();
  await createPgliteStorage({ pglite, schema });
  cleanups.push(() => pglite.exec(`DROP SCHEMA ${quoteIdentifier(schema)} CASCADE; RESET search_path`));
  // Not destroyed: kysely would close the shared instance.
  const db = new Kysely<unknown>({
    dialect: new PGliteDialect({ pglite, onCreateConnection: useSchema(schema) }),
  });
  return { pglite, db, schema };
}

/** The running text of `name` in `schema`, or undefined. */
async function definitionOf(pglite: PGlite, schema: string, name: string): Promise<string | undefined> {
  const { rows } = await pglite.query<{ definition: string }>(
    `SELECT pg_get_functiondef(p.oid) AS definition FROM pg_proc p
      WHERE p.pronamespace = (SELECT oid FROM pg_namespace WHERE nspname = $1) AND p.proname = $2`,
    [schema, name],
  );
  return rows[0]?.definition;
}

/** `file` with `text` in place of its own. */
const rewritten = (file: string, text: string): FunctionFile => functionFile(file, text);

const PROBE_INT = `CREATE OR REPLACE FUNCTION tollgate_probe()
 RETURNS integer
 LANGUAGE sql
AS $function$ SELECT 1 $function$;`;
const PROBE_TEXT = `-- Its result changes type: the step drops the old function first.
CREATE OR REPLACE FUNCTION tollgate_probe()
 RETURNS TABLE(answer text)
 LANGUAGE sql
AS $function$ SELECT 'one' $function$;`;

describe('applyFunctionFiles', () => {
  it('applies nothing again while no file changed', async () => {
    const { db } = await migratedSchema();
    expect(await db.transaction().execute((trx) => applyFunctionFiles(trx))).toEqual([]);
  });

  it('applies a file again when its text changed, and only that file', async () => {
    const { pglite, db, schema } = await migratedSchema();
    const hits = FILES.find((file) => file.file === 'count-hits.sql')!;
    const text = hits.statements.join(';\n\n').replace('BEGIN\n', 'BEGIN\n  -- a changed line\n');
    const changed = FILES.map((file) => (file === hits ? rewritten(file.file, `${text};\n`) : file));

    expect(await db.transaction().execute((trx) => applyFunctionFiles(trx, changed))).toEqual([
      'count-hits.sql',
    ]);
    expect(await definitionOf(pglite, schema, 'tollgate_count_hits')).toContain('-- a changed line');
    // Back to the file as it is: applied again, since the database holds the other text.
    expect(await db.transaction().execute((trx) => applyFunctionFiles(trx))).toEqual(['count-hits.sql']);
  });

  it("re-creates a trigger function's triggers with it, so the ledger stays append-only", async () => {
    const { pglite, db, schema } = await migratedSchema();
    const ledger = FILES.find((file) => file.file === 'ledger-append-only.sql')!;
    const changed = FILES.map((file) =>
      file === ledger ? rewritten(file.file, `-- a new comment\n${ledger.statements.join(';\n')};`) : file,
    );
    expect(await db.transaction().execute((trx) => applyFunctionFiles(trx, changed))).toEqual([
      'ledger-append-only.sql',
    ]);
    await pglite.exec(`SET search_path TO ${quoteIdentifier(schema)}`);
    await pglite.exec(`INSERT INTO accounts (id, name, created_at) VALUES ('acct_a', 'a', 0);
      INSERT INTO ledger_entries (id, account_id, amount_micros, balance_after_micros, kind, description, created_at)
      VALUES ('led_a', 'acct_a', 5, 5, 'credit', 'c', 0)`);
    await expect(pglite.exec('DELETE FROM ledger_entries')).rejects.toThrow('ledger_entries is append-only');
    await expect(pglite.exec('TRUNCATE ledger_entries')).rejects.toThrow('ledger_entries is append-only');
  });

  it('creates again a function that is missing, though its file did not change', async () => {
    const { pglite, db, schema } = await migratedSchema();
    await pglite.exec(`DROP FUNCTION ${quoteIdentifier(schema)}.tollgate_meter_batch(jsonb, jsonb)`);

    expect(await db.transaction().execute((trx) => applyFunctionFiles(trx))).toEqual(['meter-batch.sql']);
    expect(await definitionOf(pglite, schema, 'tollgate_meter_batch')).toBeDefined();
  });

  it("drops the function of a file that is gone, and takes a file that changes its function's result", async () => {
    const { pglite, db, schema } = await migratedSchema();
    const apply = (files: FunctionFile[]) =>
      db.transaction().execute((trx) => applyFunctionFiles(trx, files));

    expect(await apply([...FILES, rewritten('probe.sql', PROBE_INT)])).toEqual(['probe.sql']);
    expect(await apply([...FILES, rewritten('probe.sql', PROBE_TEXT)])).toEqual(['probe.sql']);
    expect(await definitionOf(pglite, schema, 'tollgate_probe')).toContain('RETURNS TABLE(answer text)');

    expect(await apply(FILES)).toEqual([]);
    expect(await definitionOf(pglite, schema, 'tollgate_probe')).toBeUndefined();
    const { rows } = await pglite.query(
      `SELECT file FROM ${quoteIdentifier(schema)}.tollgate_functions WHERE file = 'probe.sql'`,
    );
    expect(rows).toEqual([]);
  });
});

describe('functionFile', () => {
  it('refuses a file whose first statement does not create the function its name says', () => {
    expect(() => functionFile('probe.sql', PROBE_INT.replace('tollgate_probe', 'tollgate_other'))).toThrow(
      'sql/functions/probe.sql must begin with CREATE OR REPLACE FUNCTION tollgate_probe(…)',
    );
    expect(() => functionFile('probe.sql', `SELECT 1;\n${PROBE_INT}`)).toThrow('must begin with');
  });

  it('every file of sql/functions creates one function, named after the file, and ends its statements', () => {
    for (const file of FILES) {
      expect(file.name, file.file).toMatch(/^tollgate_[a-z_]+$/);
      expect(
        file.statements.filter((s) => /CREATE OR REPLACE FUNCTION/.test(s)),
        file.file,
      ).toHaveLength(1);
    }
  });
});
