import {
  type CompiledQuery,
  type DatabaseConnection,
  DummyDriver,
  Kysely,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  sql,
} from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Database } from './database.js';
import type { DialectCapabilities } from './dialect-capabilities.js';
import { columnsOf, prepareQuery, runPreparedQueriesDirectly, valuesOf } from './prepared-query.js';
import type { QueryContext } from './query-context.js';

/** A Kysely that compiles for SQLite and records every query it is asked to run. */
function recordingContext(dialect = { name: 'test' } as DialectCapabilities) {
  const ran: CompiledQuery[] = [];
  const connection: DatabaseConnection = {
    executeQuery: async (query) => {
      ran.push(query);
      return { rows: [{ echoed: query.parameters }] as never[], numAffectedRows: 3n };
    },
    // biome-ignore lint/correctness/useYield: never streamed
    streamQuery: async function* () {
      throw new Error('not used');
    },
  };
  class RecordingDriver extends DummyDriver {
    override async acquireConnection() {
      return connection;
    }
  }
  const db = new Kysely<Database>({
    dialect: {
      createAdapter: () => new SqliteAdapter(),
      createDriver: () => new RecordingDriver(),
      createIntrospector: (k) => new SqliteIntrospector(k),
      createQueryCompiler: () => new SqliteQueryCompiler(),
    },
  });
  const ctx: QueryContext = { db, dialect, now: () => 0 };
  return { ctx, ran };
}

const byIdAndMinimum = prepareQuery((db, p: { id: string; minimum: number }) =>
  db
    .selectFrom('accounts')
    .select('balance_micros')
    .where('id', '=', p.id)
    .where('balance_micros', '>=', p.minimum)
    .where('name', '!=', 'fixed'),
);

describe('prepareQuery', () => {
  it('binds each named parameter at its position and keeps the values the builder bound itself', async () => {
    const { ctx, ran } = recordingContext();
    await byIdAndMinimum.first(ctx, { id: 'acct_1', minimum: 5 });
    await byIdAndMinimum.first(ctx, { minimum: 7, id: 'acct_2' });
    expect(ran.map((q) => q.parameters)).toEqual([
      ['acct_1', 5, 'fixed'],
      ['acct_2', 7, 'fixed'],
    ]);
    expect(ran[0]!.sql).toBe(
      'select "balance_micros" from "accounts" where "id" = ? and "balance_micros" >= ? and "name" != ?',
    );
    // Compiled once: the same SQL text, not an equal one built again.
    expect(ran[1]!.sql).toBe(ran[0]!.sql);
  });

  it('compiles once per dialect and passes the dialect to the builder', async () => {
    const seen: string[] = [];
    const query = prepareQuery((db, p: { id: string }, dialect) => {
      seen.push(dialect.name);
      return db.selectFrom('accounts').select('id').where('id', '=', p.id);
    });
    const a = recordingContext({ name: 'a' } as DialectCapabilities);
    const b = recordingContext({ name: 'b' } as DialectCapabilities);
    await query.first(a.ctx, { id: '1' });
    await query.first(a.ctx, { id: '2' });
    await query.first(b.ctx, { id: '3' });
    expect(seen).toEqual(['a', 'b']);
  });

  it('first and run read the result', async () => {
    const { ctx } = recordingContext();
    expect(await byIdAndMinimum.first(ctx, { id: 'x', minimum: 1 })).toEqual({ echoed: ['x', 1, 'fixed'] });
    expect(await byIdAndMinimum.run(ctx, { id: 'x', minimum: 1 })).toBe(3);
  });

  it('on a transaction registered to run directly, goes to its statements past kysely, with the same SQL and values', async () => {
    const { ctx, ran } = recordingContext();
    const trx = recordingContext().ctx.db;
    const direct: [string, string, readonly unknown[]][] = [];
    runPreparedQueriesDirectly(trx, {
      first: (sql, parameters) => {
        direct.push(['first', sql, parameters]);
        return { balance_micros: 9 };
      },
      run: (sql, parameters) => {
        direct.push(['run', sql, parameters]);
        return 2;
      },
    });
    expect(await byIdAndMinimum.first(ctx, { id: 'x', minimum: 1 }, trx)).toEqual({ balance_micros: 9 });
    expect(await byIdAndMinimum.run(ctx, { id: 'y', minimum: 2 }, trx)).toBe(2);
    const text =
      'select "balance_micros" from "accounts" where "id" = ? and "balance_micros" >= ? and "name" != ?';
    expect(direct).toEqual([
      ['first', text, ['x', 1, 'fixed']],
      ['run', text, ['y', 2, 'fixed']],
    ]);
    expect(ran).toEqual([]);
    // Any other handle still runs through kysely.
    await byIdAndMinimum.first(ctx, { id: 'z', minimum: 3 });
    expect(ran.map((q) => q.parameters)).toEqual([['z', 3, 'fixed']]);
  });

  it('refuses a parameter used where kysely does not bind one', async () => {
    const { ctx } = recordingContext();
    const inlined = prepareQuery((db, p: { column: string }) =>
      db.selectFrom('accounts').select(sql.lit(p.column).as('x')),
    );
    await expect(inlined.first(ctx, { column: 'id' })).rejects.toThrow(/where kysely does not bind one/);
  });

  it('valuesOf binds every listed column of an insert', async () => {
    const { ctx, ran } = recordingContext();
    type Row = { id: string; name: string };
    const columns = columnsOf<Row>()({ id: true, name: true });
    const insert = prepareQuery((db, row: Row) =>
      db.insertInto('projects').values(valuesOf(row, columns) as never),
    );
    await insert.run(ctx, { name: 'n', id: 'i' });
    expect(ran[0]!.sql).toBe('insert into "projects" ("id", "name") values (?, ?)');
    expect(ran[0]!.parameters).toEqual(['i', 'n']);
  });
});
