import { createRequire } from 'node:module';
import { join } from 'node:path';

/*
 * The mock upstream and the bare proxy run as plain JavaScript, not under the tsx loader, so their
 * memory and start-up are those of a bare Node process (the loader alone adds ~35 MB of RSS).
 * esbuild comes with tsx; bare imports (undici) stay external and resolve from the repo.
 */

interface Esbuild {
  buildSync(options: Record<string, unknown>): unknown;
}

/** Compiles each entry to `<outDir>/<name>.mjs`; returns the node arguments to run each one. */
export function nodeArgsFor(entries: string[], outDir: string): string[][] {
  try {
    const esbuild = createRequire(import.meta.resolve('tsx/package.json'))('esbuild') as Esbuild;
    esbuild.buildSync({
      entryPoints: entries,
      outdir: outDir,
      outExtension: { '.js': '.mjs' },
      bundle: true,
      packages: 'external',
      platform: 'node',
      format: 'esm',
      target: 'node20',
      logLevel: 'error',
    });
    return entries.map((entry) => [join(outDir, `${entry.split('/').at(-1)?.replace(/\.ts$/, '')}.mjs`)]);
  } catch (error) {
    console.warn(`bench: esbuild unavailable (${(error as Error).message}); running under tsx instead`);
    return entries.map((entry) => ['--import', 'tsx', entry]);
  }
}
