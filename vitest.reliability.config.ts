import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * `npm run test:reliability`: the reliability suite (test/reliability/**\/*.reliability.ts), which the
 * main config never picks up (it includes only `*.test.ts`). Same aliases as `vitest.config.ts`, so
 * it runs against the TypeScript sources with no build first.
 */
export default defineConfig({
  resolve: { alias: base.resolve?.alias },
  test: {
    include: ['test/reliability/**/*.reliability.ts'],
    testTimeout: 120_000,
    hookTimeout: 240_000,
    // Files spawn servers and drive load: two at a time on a two-core machine.
    maxWorkers: 2,
  },
});
