import { type Compilable, CompiledQuery, type Insertable, type Kysely } from 'kysely';
import type { Database } from './database.js';
import type { DialectCapabilities } from './dialect-capabilities.js';
import type { QueryContext } from './query-context.js';

/**
 * A query of the hot path, built and compiled by kysely once per dialect and then run with new
 * values, the way a prepared statement is. Building and compiling a kysely query costs more than
 * running the small statement it yields (SQLite), so the request path runs these.
 *
 * `build` receives the dialect (the query may depend on it) and a stand-in for its parameters:
 * reading `p.accountId` gives a marker value that kysely binds as a parameter like any other. The compiled parameter list then says, position by
 * position, which named value goes where; everything else the builder bound is kept as it was.
 * A builder must therefore use each parameter only where kysely binds a value (a comparison, an
 * insert's values, a `set`), never to decide the query's shape (`$if`, a column name, a literal):
 * the query would be compiled once for whatever the marker decided. Using a marker where kysely
 * does not bind it fails at the first run, when it shows up in the SQL text.
 */
export interface PreparedQuery<P, Row> {
  /** The first row, or `undefined`. */
  first(ctx: QueryContext, params: P, on?: Kysely<Database>): Promise<Row | undefined>;
  /** Runs a statement without `RETURNING`; how many rows it changed. */
  run(ctx: QueryContext, params: P, on?: Kysely<Database>): Promise<number>;
}

const MARKER = '\u0000tollgate-param:';

interface Template {
  sql: string;
  /** Per position: the name of the parameter, or `{ value }` for one the builder bound itself. */
  slots: (string | { value: unknown })[];
}

export function prepareQuery<P extends object, Row = never>(
  build: (db: Kysely<Database>, p: P, dialect: DialectCapabilities) => Compilable<Row>,
): PreparedQuery<P, Row> {
  const templates = new WeakMap<DialectCapabilities, Template>();
  const markers = new Proxy({} as P, { get: (_, name) => `${MARKER}${String(name)}` });

  const templateFor = (ctx: QueryContext, db: Kysely<Database>): Template => {
    let template = templates.get(ctx.dialect);
    if (!template) {
      template = compileTemplate(build(db, markers, ctx.dialect).compile());
      templates.set(ctx.dialect, template);
    }
    return template;
  };
  const bind = (template: Template, params: P): unknown[] => {
    const values = params as Record<string, unknown>;
    return template.slots.map((slot) => (typeof slot === 'string' ? values[slot] : slot.value));
  };
  const execute = (ctx: QueryContext, params: P, on: Kysely<Database> | undefined) => {
    const db = on ?? ctx.db;
    const template = templateFor(ctx, db);
    return db.executeQuery(CompiledQuery.raw(template.sql, bind(template, params)) as CompiledQuery<Row>);
  };

  return {
    first: async (ctx, params, on) => {
      const direct = on && directStatements.get(on);
      if (direct) {
        const template = templateFor(ctx, on);
        return direct.first(template.sql, bind(template, params)) as Row | undefined;
      }
      return (await execute(ctx, params, on)).rows[0];
    },
    run: async (ctx, params, on) => {
      const direct = on && directStatements.get(on);
      if (direct) {
        const template = templateFor(ctx, on);
        return direct.run(template.sql, bind(template, params));
      }
      return Number((await execute(ctx, params, on)).numAffectedRows ?? 0n);
    },
  };
}

/**
 * A synchronous way to run SQL text on the connection a transaction holds, for a driver that has
 * one (better-sqlite3). A prepared query run on a transaction registered with
 * {@link runPreparedQueriesDirectly} goes straight to it, past kysely's executor: the same statement
 * with the same parameters, in the same transaction.
 */
export interface DirectStatements {
  /** The statement's first row, or `undefined`. */
  first(sql: string, parameters: readonly unknown[]): unknown;
  /** Runs a statement without `RETURNING`; how many rows it changed. */
  run(sql: string, parameters: readonly unknown[]): number;
}

const directStatements = new WeakMap<Kysely<Database>, DirectStatements>();

/** Prepared queries run on `trx` go to `statements` (see {@link DirectStatements}). */
export function runPreparedQueriesDirectly(trx: Kysely<Database>, statements: DirectStatements): void {
  directStatements.set(trx, statements);
}

function compileTemplate(query: CompiledQuery<unknown>): Template {
  if (query.sql.includes(MARKER)) {
    throw new Error(`a prepared query used a parameter where kysely does not bind one: ${query.sql}`);
  }
  return {
    sql: query.sql,
    slots: query.parameters.map((value) =>
      typeof value === 'string' && value.startsWith(MARKER) ? value.slice(MARKER.length) : { value },
    ),
  };
}

/** A row of `Table` as an insert gives it: every column, none optional. */
export type InsertRow<Table> = Required<Insertable<Table>>;

/**
 * Every column of a table, checked by the compiler: `columnsOf<LedgerEntriesTable>()({ id: true, … })`
 * fails to compile when the table gains a column the list lacks (or the list names one it lacks).
 */
export function columnsOf<Table>() {
  return <const C extends Record<keyof Table, true>>(
    columns: C & Record<Exclude<keyof C, keyof Table>, never>,
  ) => Object.keys(columns) as (keyof Table & string)[];
}

/** An insert's values object that binds each listed column to the parameter of the same name. */
export function valuesOf<Row extends object>(p: Row, columns: readonly (keyof Row & string)[]): Row {
  return Object.fromEntries(columns.map((column) => [column, p[column]])) as Row;
}
