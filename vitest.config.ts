import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (path: string) => fileURLToPath(new URL(`./packages/${path}`, import.meta.url));

// Tests run against the TypeScript sources, so `npm test` needs no build first.
export default defineConfig({
  resolve: {
    alias: [
      { find: /^@tollgate\/core\/testing$/, replacement: src('core/src/testing/index.ts') },
      { find: /^@tollgate\/core$/, replacement: src('core/src/index.ts') },
      { find: /^@tollgate\/storage-kysely$/, replacement: src('storage-kysely/src/index.ts') },
      { find: /^@tollgate\/storage-sqlite$/, replacement: src('storage-sqlite/src/index.ts') },
      { find: /^@tollgate\/storage-postgres$/, replacement: src('storage-postgres/src/index.ts') },
      { find: /^@tollgate\/node-server$/, replacement: src('node-server/src/index.ts') },
      { find: /^@tollgate\/testing$/, replacement: src('testing/src/index.ts') },
    ],
  },
  test: {
    include: ['packages/*/src/**/*.test.ts', 'test/**/*.test.ts', 'examples/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
