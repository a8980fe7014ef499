import type { GatewayLogger } from '@tollgate/core';
import { resolveStorageTarget } from '../open-storage.js';
import {
  loadServerSecret,
  SERVER_SECRET_ENV,
  type ServerSecret,
  ServerSecretError,
} from '../server-secret.js';
import { CliError } from './cli-errors.js';
import type { CliIo } from './cli-io.js';

/**
 * The server secret for `tollgate serve` on `db` (see `server-secret.ts`). Called before anything
 * is provisioned or forked, so a refusal (Postgres without `TOLLGATE_SECRET`, a too-short value)
 * creates nothing, and the primary of `--workers` creates the file before its workers read it.
 * `announce` logs where the secret comes from (the file's path, never the secret); workers pass
 * false, their primary has said it.
 */
export async function loadServeSecret(
  db: string,
  io: CliIo,
  log: GatewayLogger,
  announce: boolean,
): Promise<string> {
  const loaded = await loadCliSecret(db, io);
  if (loaded.source === 'file') {
    if (loaded.warning) log.warn({ secretFile: loaded.path }, loaded.warning);
    if (announce) {
      log.info(
        { secretFile: loaded.path, created: loaded.created },
        `server secret: ${loaded.created ? 'created' : 'using'} ${loaded.path} ` +
          `(keep it with the database, back it up apart from it, or set ${SERVER_SECRET_ENV})`,
      );
    }
  } else if (announce) {
    log.info(
      { secretSource: loaded.source === 'env' ? SERVER_SECRET_ENV : 'memory' },
      loaded.source === 'env'
        ? `server secret: from ${SERVER_SECRET_ENV}`
        : 'server secret: a random one for this process (in-memory database)',
    );
  }
  return loaded.secret;
}

/** The server secret for a command on `db`, as `serve` loads it; a refusal is a `CliError` (exit 1). */
export async function loadCliSecret(db: string, io: CliIo): Promise<ServerSecret> {
  try {
    return await loadServerSecret({ env: io.env, target: resolveStorageTarget(db, io.cwd) });
  } catch (error) {
    if (error instanceof ServerSecretError) throw new CliError(error.message);
    throw error;
  }
}
