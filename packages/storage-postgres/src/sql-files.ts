import { readdirSync, readFileSync } from 'node:fs';
import { postgreSplitterOptions, splitQuery } from 'dbgate-query-splitter';

/*
 * The package's SQL lives in files under `sql/` beside `src/` and `dist/`, read when the storage
 * opens: from `src/` (tests, tsx) and from the bundled `dist/index.js` alike, the folder is one level
 * up from this module.
 */
const SQL_DIR = new URL('../sql/', import.meta.url);

/** The text of `path` under the package's `sql/` folder. */
export function readSqlFile(path: string): string {
  return readFileSync(new URL(path, SQL_DIR), 'utf8');
}

/** The names of the `.sql` files of a folder under `sql/`, sorted. */
export function sqlFilesIn(folder: string): string[] {
  return readdirSync(new URL(`${folder}/`, SQL_DIR))
    .filter((name) => name.endsWith('.sql'))
    .sort();
}

/**
 * The statements of a SQL script, in order, without their final semicolons. One statement at a time
 * is all the extended protocol takes (PGlite sends every query that way, pg any with parameters).
 * Dollar-quoted bodies, quoted strings and comments are split around, not into; a piece that is only
 * comments is no statement.
 */
export function sqlStatements(script: string): string[] {
  return (splitQuery(script, postgreSplitterOptions) as string[]).filter(
    (statement) => statement.replace(COMMENTS, '').trim() !== '',
  );
}
const COMMENTS = /--[^\n]*|\/\*[\s\S]*?\*\//g;
