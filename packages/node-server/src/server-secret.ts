import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { link, open, readFile, stat, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { StorageTarget } from './open-storage.js';

/**
 * The server secret: what stored idempotent responses are sealed under (and, later, BYOK keys), so
 * that the database alone reveals none of them. Where it comes from, in order:
 *
 * 1. `TOLLGATE_SECRET`: any string of at least 32 characters (surrounding whitespace is ignored),
 *    used as its UTF-8 bytes. `openssl rand -hex 32` makes a good one. Every process that shares a
 *    database must have the same value, and it must not change (what was sealed under the old
 *    value cannot be opened).
 * 2. SQLite: a file beside the database, `<database file>.secret` (mode 0600, 64 hex characters),
 *    created on first need with 32 random bytes. Creation is atomic (written to a temporary file,
 *    then hard-linked into place, which fails if the name exists), so processes starting together
 *    all end up with the winner's secret. Keep the file with the database, but back it up apart
 *    from it: a copy holding both gives the sealed data away.
 * 3. Postgres without `TOLLGATE_SECRET`: refused. Several processes, possibly on several hosts,
 *    share a Postgres database, and a file on one host would silently differ from another's.
 * 4. An in-memory SQLite database: a random secret for this process (the data dies with it anyway).
 */
export type ServerSecret =
  | { source: 'env'; secret: string }
  | { source: 'file'; secret: string; path: string; created: boolean; warning?: string }
  | { source: 'memory'; secret: string };

/** The environment variable that holds the secret. */
export const SERVER_SECRET_ENV = 'TOLLGATE_SECRET';
/** The fewest characters `TOLLGATE_SECRET` (or the file) may hold. */
export const MIN_SECRET_CHARS = 32;

/** The secret cannot be had; the message says what to do. Never contains the secret. */
export class ServerSecretError extends Error {
  override name = 'ServerSecretError';
}

/** The secret file of a SQLite database file. */
export function secretFilePath(sqlitePath: string): string {
  return `${sqlitePath}.secret`;
}

/** Loads (or, for a SQLite file, creates once) the server secret for the database `target`. */
export async function loadServerSecret(options: {
  env: Record<string, string | undefined>;
  target: StorageTarget;
}): Promise<ServerSecret> {
  const fromEnv = options.env[SERVER_SECRET_ENV]?.trim();
  if (fromEnv) {
    if (fromEnv.length < MIN_SECRET_CHARS) {
      throw new ServerSecretError(
        `${SERVER_SECRET_ENV} is too short: it must be at least ${MIN_SECRET_CHARS} characters ` +
          `(it has ${fromEnv.length}). Generate one with: openssl rand -hex 32`,
      );
    }
    return { source: 'env', secret: fromEnv };
  }
  const { target } = options;
  if (target.kind === 'postgres') {
    throw new ServerSecretError(
      `${SERVER_SECRET_ENV} is not set. A Postgres deployment needs it: every gateway process on the ` +
        'database must seal stored responses under the same secret. Set it to the same value ' +
        `(at least ${MIN_SECRET_CHARS} characters, e.g. from: openssl rand -hex 32) for every process ` +
        'that serves this database, and keep it.',
    );
  }
  if (target.location === ':memory:') return { source: 'memory', secret: randomBytes(32).toString('hex') };
  const path = secretFilePath(target.location);
  return { source: 'file', path, ...(await readOrCreateSecretFile(path)) };
}

/**
 * The secret in the file at `path`, creating the file (0600, 32 random bytes as hex) when it does
 * not exist. Concurrent callers, in this process or others, all get the same secret.
 */
export async function readOrCreateSecretFile(
  path: string,
): Promise<{ secret: string; created: boolean; warning?: string }> {
  const existing = await readSecretFile(path);
  if (existing) return { ...existing, created: false };
  const secret = randomBytes(32).toString('hex');
  if (await createExclusively(path, `${secret}\n`)) return { secret, created: true };
  // Another process created it first: use theirs.
  const theirs = await readSecretFile(path);
  if (!theirs) throw new ServerSecretError(`the server secret file ${path} vanished while it was created`);
  return { ...theirs, created: false };
}

/** Writes the whole file under a temporary name, then links it into place; false when `path` exists. */
async function createExclusively(path: string, content: string): Promise<boolean> {
  const temporary = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeNewFile(temporary, content);
  } catch (error) {
    throw fileError('cannot create the server secret file', path, error);
  }
  try {
    await link(temporary, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    // A file system without hard links: create the name itself with O_EXCL (a reader that comes
    // between the create and the write sees a short file and waits; see readSecretFile).
    try {
      await writeNewFile(path, content);
      return true;
    } catch (fallbackError) {
      if ((fallbackError as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw fileError('cannot create the server secret file', path, fallbackError);
    }
  } finally {
    await unlink(temporary).catch(() => {});
  }
}

/** Creates `path` (it must not exist) with mode 0600, writes `content` and syncs it to disk. */
async function writeNewFile(path: string, content: string): Promise<void> {
  const handle = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  try {
    await handle.writeFile(content);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** The file's secret, or null when there is no file. A short one is waited for briefly, then refused. */
async function readSecretFile(path: string): Promise<{ secret: string; warning?: string } | null> {
  for (let attempt = 0; ; attempt++) {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw fileError('cannot read the server secret file', path, error);
    }
    const secret = text.trim();
    if (secret.length >= MIN_SECRET_CHARS) return { secret, ...(await modeWarning(path)) };
    // Only a creator without hard links writes the final name in place; give it a moment.
    if (attempt >= 20) {
      throw new ServerSecretError(
        `the server secret file ${path} holds fewer than ${MIN_SECRET_CHARS} characters. Restore it ` +
          `from a backup, or set ${SERVER_SECRET_ENV}; deleting it makes a new secret, and what was ` +
          'sealed under the old one (stored idempotent responses) can no longer be read.',
      );
    }
    await sleep(50);
  }
}

/** A warning when others than the owner may read the file (POSIX permissions only). */
async function modeWarning(path: string): Promise<{ warning?: string }> {
  if (process.platform === 'win32') return {};
  const { mode } = await stat(path);
  return mode & 0o077
    ? { warning: `the server secret file ${path} is readable by other users; run: chmod 600 ${path}` }
    : {};
}

function fileError(what: string, path: string, error: unknown): ServerSecretError {
  const code = (error as NodeJS.ErrnoException).code;
  const why =
    code === 'ENOENT'
      ? `the directory ${dirname(path)} does not exist`
      : code === 'EACCES' || code === 'EPERM'
        ? 'permission denied'
        : (code ?? (error as Error).message);
  return new ServerSecretError(`${what} ${path}: ${why}`, { cause: error });
}
