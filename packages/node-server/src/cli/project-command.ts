import { type CliIo, printResult } from './cli-io.js';
import { requireAccount, withStorage } from './command-context.js';
import { COMMON_OPTIONS, parseCommandArgs, required } from './parse-values.js';
import { commandUsage } from './usage.js';

/** `tollgate project create --account ID --name NAME [--json]` → `{"id": "proj_..."}`. */
export async function projectCreate(args: string[], io: CliIo): Promise<number> {
  const command = 'project create';
  const { values } = parseCommandArgs(command, args, {
    ...COMMON_OPTIONS,
    json: { type: 'boolean' },
    account: { type: 'string' },
    name: { type: 'string' },
  });
  if (values.help) {
    io.stdout.write(commandUsage(command) ?? '');
    return 0;
  }
  const accountId = required(command, 'account', values.account);
  const name = required(command, 'name', values.name);
  const project = await withStorage(values.db, io, async (storage) => {
    await requireAccount(storage, accountId);
    return storage.createProject({ accountId, name });
  });
  printResult(
    io,
    values.json ?? false,
    { id: project.id },
    `Created project ${project.id} ("${name}") in ${accountId}`,
  );
  return 0;
}
