import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const SCRIPT = join(REPO, 'scripts/check-docs.mjs');

/** Runs `node scripts/check-docs.mjs [--root DIR]`. */
function checkDocs(root?: string) {
  const run = spawnSync(process.execPath, [SCRIPT, ...(root ? ['--root', root] : [])], {
    cwd: REPO,
    encoding: 'utf8',
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A tree with README.md, docs/guide.md and a package.json with a `build` script; `readme` is README's text. */
function fixture(readme: string): string {
  const root = mkdtempSync(join(tmpdir(), 'check-docs-'));
  dirs.push(root);
  mkdirSync(join(root, 'docs', 'features'), { recursive: true });
  writeFileSync(join(root, 'package.json'), JSON.stringify({ scripts: { build: 'true' } }));
  writeFileSync(
    join(root, 'docs', 'guide.md'),
    '# Guide\n\n## Set `PORT` up\n\nBack to the [README](../README.md).\n',
  );
  writeFileSync(
    join(root, 'docs', 'features', 'cache.md'),
    '# Cache\n\nSee [the guide](../guide.md#guide).\n',
  );
  writeFileSync(join(root, 'README.md'), readme);
  return root;
}

const GOOD = [
  '# Demo',
  '',
  'Read [the guide](docs/guide.md), [its port section](docs/guide.md#set-port-up) and',
  '[the cache](docs/features/cache.md) or [the site](https://example.com/missing.md).',
  '',
  '```sh',
  'npm run build',
  'npx tollgate serve --port 0',
  'npx tollgate key revoke key_123',
  '# [not a link](nowhere.md) inside a block',
  '```',
  '',
].join('\n');

describe('scripts/check-docs.mjs', () => {
  it('passes on a tree whose links, scripts and commands all exist', () => {
    const result = checkDocs(fixture(GOOD));
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  });

  it('fails on a broken link, naming the page and line', () => {
    const result = checkDocs(fixture(`${GOOD}See [the setup](docs/setup.md).\n`));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('README.md:12: link "docs/setup.md": docs/setup.md does not exist');
  });

  it('fails on an anchor that no heading of the target has', () => {
    const result = checkDocs(fixture(`${GOOD}[Ports](docs/guide.md#ports)\n`));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('docs/guide.md has no heading #ports');
  });

  it('fails on an npm script the package.json lacks and a command the CLI lacks', () => {
    const result = checkDocs(
      fixture(`${GOOD}Run \`npm run docs:serve\`, then \`tollgate key rotate ID\`.\n`),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('package.json has no script "docs:serve"');
    expect(result.stderr).toContain('the CLI has no command "key rotate"');
  });

  it('passes on this repository', () => {
    const result = checkDocs();
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  });
});
