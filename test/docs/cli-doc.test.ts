import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../packages/node-server/src/cli/run-cli.js';

const PAGE = readFileSync(new URL('../../docs/cli.md', import.meta.url), 'utf8');

/** Flags every command takes, documented once under "Options for every command". */
const COMMON_FLAGS = ['--db', '--config', '--json', '-h', '--help', '-v', '--version'];

/**
 * Flags the page may name before the CLI has them: `--limit-reset` lands from another branch
 * (product.md, "Windows on key limits").
 */
const PENDING_FLAGS = new Set(['--limit-reset']);

/** Runs `tollgate <argv>` in-process and returns what it printed on stdout (help never opens a database). */
async function tollgate(...argv: string[]): Promise<string> {
  let stdout = '';
  const code = await runCli(argv, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: () => true },
    env: {},
    cwd: process.cwd(),
  });
  expect(code, `tollgate ${argv.join(' ')}`).toBe(0);
  return stdout;
}

/** The command words of every synopsis `tollgate --help` lists (`serve`, `account create`, …). */
function commandsOf(usage: string): string[] {
  const commands = usage.slice(usage.indexOf('Commands:'), usage.indexOf('Options for every command'));
  return [...commands.matchAll(/^ {2}([a-z][a-z-]*(?: [a-z][a-z-]*)?)(?= |$)/gm)].map((m) => m[1] as string);
}

const flagsIn = (text: string) => new Set(text.match(/(?<![\w-])--?[a-z][a-z-]*/g) ?? []);

/** The flags a help text's option lines give (their first column, not what the descriptions mention). */
const optionFlags = (help: string) =>
  flagsIn([...help.matchAll(/^ {2}(-.*?)(?: {2,}|$)/gm)].map((m) => m[1]).join(' '));

/** The page's section for a command: from its `### \`tollgate …\`` heading to the next heading. */
function sectionOf(command: string): string | undefined {
  const heading = `### \`tollgate ${command}\``;
  const start = PAGE.indexOf(`${heading}\n`);
  if (start === -1) return undefined;
  const rest = PAGE.slice(start + heading.length);
  const end = rest.search(/^#{2,3} /m);
  return end === -1 ? rest : rest.slice(0, end);
}

describe('docs/cli.md', async () => {
  const usage = await tollgate('--help');
  const commands = commandsOf(usage);

  it('reads the commands from the help (a sanity floor)', () => {
    expect(commands).toContain('serve');
    expect(commands).toContain('key revoke');
    expect(commands.length).toBeGreaterThan(10);
  });

  it('documents every flag every command takes', () => {
    const common = sectionOf('') ?? PAGE.slice(PAGE.indexOf('## Options for every command'));
    for (const flag of COMMON_FLAGS) expect(flagsIn(common), `common flag ${flag}`).toContain(flag);
  });

  it.each(commands)('has a section for `tollgate %s` naming each of its flags', async (command) => {
    const section = sectionOf(command);
    expect(section, `docs/cli.md has no "### \`tollgate ${command}\`" section`).toBeDefined();
    const help = await tollgate(...command.split(' '), '--help');
    const flags = [...optionFlags(help)].filter((flag) => !COMMON_FLAGS.includes(flag));
    const missing = flags.filter((flag) => !flagsIn(section as string).has(flag));
    expect(missing, `flags of tollgate ${command} missing from its section`).toEqual([]);
    const tableFlags = flagsIn(
      [...(section as string).matchAll(/^\| `(-[^`]*)` \|/gm)].map((m) => m[1]).join(' '),
    );
    const unknown = [...tableFlags].filter(
      (flag) => !optionFlags(help).has(flag) && !COMMON_FLAGS.includes(flag) && !PENDING_FLAGS.has(flag),
    );
    expect(unknown, `flags in the section of tollgate ${command} that its help lacks`).toEqual([]);
  });
});
