import { defineConfig } from 'vite';

export default defineConfig({
  // Relative asset URLs: the server may host the dashboard under any path.
  base: './',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
    modulePreload: { polyfill: false },
    // Never inline assets as data: URLs into scripts or styles; every file is served from 'self'.
    assetsInlineLimit: 0,
  },
});
