import {
  addByokKey,
  byokKeyView,
  byokProviderProblem,
  createBodySealer,
  type NewByokKeyInput,
  newByokKeySchema,
  serverSecretBytes,
} from '@tollgate/core';
import { SERVER_SECRET_ENV } from '../server-secret.js';
import { CliError, UsageError } from './cli-errors.js';
import { type CliIo, printResult } from './cli-io.js';
import { dbOption, loadConfig, requireAccount, withStorage } from './command-context.js';
import { COMMON_OPTIONS, parseCommandArgs, required } from './parse-values.js';
import { loadCliSecret } from './serve-secret.js';
import { commandUsage } from './usage.js';

/** The flag of each field of `newByokKeySchema`, for its error messages. */
const FLAGS: Record<string, string> = {
  provider: '--provider',
  api_key: '--api-key',
  label: '--label',
  allow_fallback: '--allow-fallback',
};

/**
 * `tollgate byok add --account ID --provider P --api-key K [--label L] [--allow-fallback] [--json]`:
 * stores one of the account's own provider keys, sealed under the server secret exactly as
 * `POST /v1/byok` does (this may be what creates the secret file beside a SQLite database). Prints
 * the stored key's view, never the key.
 */
export async function byokAdd(args: string[], io: CliIo): Promise<number> {
  const command = 'byok add';
  const { values } = parseCommandArgs(command, args, {
    ...COMMON_OPTIONS,
    json: { type: 'boolean' },
    account: { type: 'string' },
    provider: { type: 'string' },
    'api-key': { type: 'string' },
    label: { type: 'string' },
    'allow-fallback': { type: 'boolean' },
  });
  if (values.help) {
    io.stdout.write(commandUsage(command) ?? '');
    return 0;
  }
  const accountId = required(command, 'account', values.account);
  const input = parseInput(command, {
    provider: required(command, 'provider', values.provider),
    api_key: required(command, 'api-key', values['api-key']),
    label: values.label ?? null,
    allow_fallback: values['allow-fallback'] ?? false,
  });
  const { catalogue, path: configPath } = loadConfig(values.config, io);
  const problem = byokProviderProblem(catalogue, input.provider);
  if (problem) throw new CliError(`--provider: ${problem} (config file ${configPath})`);

  const key = await withStorage(values.db, io, async (storage) => {
    await requireAccount(storage, accountId);
    const secret = await loadSecret(dbOption(values.db, io), io);
    const sealer = createBodySealer(serverSecretBytes(secret), 'byok');
    return addByokKey(storage, sealer, catalogue, { ...input, accountId });
  });
  const label = key.label === null ? '' : ` ("${key.label}")`;
  printResult(
    io,
    values.json ?? false,
    byokKeyView(key),
    `Added BYOK key ${key.id}${label} for provider ${key.provider} to ${accountId}` +
      (key.allowFallback ? '; other failures may fall back to the paid routes' : ''),
  );
  return 0;
}

/** The input through the API's own rules; a refusal names the flag, never the key. */
function parseInput(command: string, raw: Record<string, unknown>): NewByokKeyInput {
  const parsed = newByokKeySchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => {
    const field = String(issue.path[0] ?? '');
    return `${FLAGS[field] ?? field} ${issue.message}`;
  });
  throw new UsageError(`${command}: ${problems.join('; ')}`);
}

/**
 * The server secret, as `tollgate serve` loads it (`TOLLGATE_SECRET`, else the file beside the
 * SQLite database, created on first need). Creating the file, or finding it readable by others,
 * is told on stderr with the file's path; stdout keeps only the result.
 */
async function loadSecret(db: string, io: CliIo): Promise<string> {
  const loaded = await loadCliSecret(db, io);
  if (loaded.source === 'file') {
    if (loaded.warning) io.stderr.write(`tollgate: warning: ${loaded.warning}\n`);
    if (loaded.created) {
      io.stderr.write(
        `tollgate: created the server secret file ${loaded.path} (keep it with the database, ` +
          `back it up apart from it, or set ${SERVER_SECRET_ENV})\n`,
      );
    }
  }
  return loaded.secret;
}
