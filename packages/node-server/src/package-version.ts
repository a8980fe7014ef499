import { readFileSync } from 'node:fs';

const PACKAGE_NAME = '@tollgate/node-server';

/**
 * The version of `@tollgate/node-server`, read from its package.json at run time: the nearest one
 * above this module named so. That is the package root whether this runs from `src/` (tsx, vitest)
 * or bundled into `dist/`.
 */
export function packageVersion(): string {
  for (let up = '../'; up.length <= 3 * 5; up += '../') {
    let manifest: { name?: unknown; version?: unknown };
    try {
      manifest = JSON.parse(readFileSync(new URL(`${up}package.json`, import.meta.url), 'utf8'));
    } catch {
      continue;
    }
    if (manifest.name === PACKAGE_NAME && typeof manifest.version === 'string') return manifest.version;
  }
  throw new Error(`cannot find the package.json of ${PACKAGE_NAME}`);
}
