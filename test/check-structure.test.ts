import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('../scripts/check-structure.mjs', import.meta.url));

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * A tree shaped like the repository's core (`packages/core/src` and its tsconfig) holding `files`
 * (paths under `src`), a feature and the hook contract beside them.
 */
function fixture(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'check-structure-'));
  dirs.push(root);
  const core = join(root, 'packages', 'core');
  const all: Record<string, string> = {
    'pipeline/feature.ts': 'export interface Feature { name: string }\n',
    'features/presets/index.ts':
      "import type { Feature } from '../../pipeline/feature.js';\n\nexport const presets: Feature = { name: 'presets' };\n",
    'gateway.ts':
      "import { presets } from './features/presets/index.js';\n\nexport const FEATURES = [presets];\n",
    ...files,
  };
  for (const [path, text] of Object.entries(all)) {
    mkdirSync(dirname(join(core, 'src', path)), { recursive: true });
    writeFileSync(join(core, 'src', path), text);
  }
  writeFileSync(
    join(core, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { module: 'ESNext', moduleResolution: 'Bundler' }, include: ['src'] }),
  );
  return root;
}

/** Runs `node scripts/check-structure.mjs` in `root` (the script reads the tree it is run in). */
function checkStructure(root: string) {
  const run = spawnSync(process.execPath, [SCRIPT], { cwd: root, encoding: 'utf8' });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

const importsPresets = (depth: number) =>
  `import { presets } from '${'../'.repeat(depth)}features/presets/index.js';\n\nexport const named = presets.name;\n`;

describe('npm run check:structure', () => {
  it('passes a tree whose stages, operations and adapters import no feature', () => {
    const result = checkStructure(
      fixture({
        'pipeline/run-hooks.ts':
          "import type { Feature } from './feature.js';\n\nexport type Hooks = Feature[];\n",
        'admin/keys/keys-routes.ts': importsPresets(2),
      }),
    );
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain(
      'pipeline, routing, metering, http, operations, providers: no feature imported',
    );
    expect(result.code).toBe(0);
  });

  it.each([
    ['pipeline/prepare-call.ts', 1],
    ['routing/plan-routes.ts', 1],
    ['metering/price-usage.ts', 1],
    ['http/handle-request.ts', 1],
    ['operations/chat/chat-operation.ts', 2],
    ['providers/openai/openai-adapter.ts', 2],
  ])('fails when %s imports a feature, naming the import', (module, depth) => {
    const result = checkStructure(fixture({ [module]: importsPresets(depth) }));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${module} > features/presets/index.ts`);
  });

  it("lets a stage's test import a feature", () => {
    const result = checkStructure(fixture({ 'pipeline/prepare-call.test.ts': importsPresets(1) }));
    expect(result.code).toBe(0);
  });

  it('fails on an import cycle', () => {
    const result = checkStructure(
      fixture({
        'routing/a.ts': "import { b } from './b.js';\n\nexport const a = () => b;\n",
        'routing/b.ts': "import { a } from './a.js';\n\nexport const b = () => a;\n",
      }),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('import cycles in packages/core/src (1)');
  });
});
