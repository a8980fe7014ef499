import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import { gzipSync } from 'node:zlib';

/** One built file of the dashboard, read once at start and served from memory. */
export interface DashboardAsset {
  body: Buffer;
  /** The gzip form, when the type compresses and it is smaller. */
  gzip: Buffer | null;
  contentType: string;
  etag: string;
  /** Vite names every file under `assets/` by its content hash, so a browser may keep it for good. */
  immutable: boolean;
}

/** The dashboard's files by their path below `/dashboard/` (`index.html`, `assets/index-3f2a.js`). */
export type DashboardAssets = ReadonlyMap<string, DashboardAsset>;

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.svg', '.json', '.txt']);

/**
 * Where `@tollgate/dashboard` keeps its build (`dist/`), found through the package's own
 * `package.json`; `null` when the package is not installed.
 */
export function dashboardDistDir(): string | null {
  try {
    const packageJson = createRequire(import.meta.url).resolve('@tollgate/dashboard/package.json');
    return join(dirname(packageJson), 'dist');
  } catch {
    return null;
  }
}

/**
 * Reads every file of a built dashboard into memory (a few hundred kB), gzipped once here rather
 * than on every request. `null` when `dir` holds no `index.html` (the dashboard was not built).
 */
export function loadDashboardAssets(dir: string | null = dashboardDistDir()): DashboardAssets | null {
  if (dir === null || !existsSync(join(dir, 'index.html'))) return null;
  const assets = new Map<string, DashboardAsset>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = join(entry.parentPath, entry.name);
    const path = relative(dir, file).split(sep).join('/');
    const extension = entry.name.slice(entry.name.lastIndexOf('.'));
    const contentType = CONTENT_TYPES[extension];
    if (contentType === undefined) continue;
    const body = readFileSync(file);
    const compressed = COMPRESSIBLE.has(extension) ? gzipSync(body, { level: 9 }) : null;
    assets.set(path, {
      body,
      gzip: compressed && compressed.length < body.length ? compressed : null,
      contentType,
      etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
      immutable: path.startsWith('assets/'),
    });
  }
  return assets;
}
