#!/usr/bin/env node
// Builds only the packages whose dist/ is older than what it is built from, so `npm start` on a
// current build starts at once, and after an edit rebuilds only the packages that changed.
// A package is stale when dist/ lacks a file its package.json exports, or when its src/ (tests
// aside), package.json, build config (tsup.config.ts, or vite.config.ts and index.html for the
// dashboard), tsconfig.json or the root tsconfig.json has a file newer than the oldest file in
// dist/ (tsup and vite both clean dist/ and rewrite all of it on every build).
// Each bundle imports its workspace dependencies from their own dist/ (tsup leaves dependencies
// external), so a package never needs rebuilding only because a dependency was rebuilt.
//   node scripts/build-if-stale.mjs
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
/** In dependency order: each one's workspace dependencies come before it. */
const PACKAGES = [
  'core',
  'storage-kysely',
  'storage-sqlite',
  'storage-postgres',
  'dashboard',
  'node-server',
  'testing',
];
const INPUT_FILES = ['package.json', 'tsup.config.ts', 'vite.config.ts', 'index.html', 'tsconfig.json'];
const IS_TEST = /\.test\.ts$/;
/** Built files a package must have besides those its package.json `exports` name. */
const EXTRA_OUTPUTS = { 'node-server': ['dist/cli.js'], dashboard: ['dist/index.html'] };

/** Every file under `dir`, recursively; none if it does not exist. */
function filesUnder(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

const mtime = (file) => statSync(file).mtimeMs;

/** Every `./dist/…` path in the package's `exports`, plus its EXTRA_OUTPUTS. */
function expectedOutputs(pkg, dir) {
  const paths = [...(EXTRA_OUTPUTS[pkg] ?? [])];
  const visit = (value) => {
    if (typeof value === 'string') {
      if (value.startsWith('./dist/')) paths.push(value);
    } else if (value !== null && typeof value === 'object') {
      Object.values(value).forEach(visit);
    }
  };
  visit(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).exports);
  return paths.map((path) => join(dir, path));
}

/** Why `pkg` needs a build, or null when its dist/ is current. */
function staleReason(pkg) {
  const dir = join(ROOT, 'packages', pkg);
  const built = filesUnder(join(dir, 'dist'));
  if (built.length === 0) return 'no dist/';
  // A build that failed half-way (say, in the type declarations) leaves fresh files but not all.
  if (expectedOutputs(pkg, dir).some((file) => !existsSync(file))) return 'dist/ is incomplete';
  const builtAt = Math.min(...built.map(mtime));
  const inputs = [
    ...filesUnder(join(dir, 'src')).filter((file) => !IS_TEST.test(file)),
    ...INPUT_FILES.map((name) => join(dir, name)).filter((file) => existsSync(file)),
    join(ROOT, 'tsconfig.json'),
  ];
  const newer = inputs.find((file) => mtime(file) > builtAt);
  return newer === undefined ? null : 'sources changed since the last build';
}

for (const pkg of PACKAGES) {
  const reason = staleReason(pkg);
  if (reason === null) continue;
  console.log(`build-if-stale: building packages/${pkg} (${reason})`);
  const result = spawnSync('npm', ['run', 'build', '--workspace', `packages/${pkg}`], {
    cwd: ROOT,
    stdio: 'inherit',
    shell: process.platform === 'win32',
  });
  if (result.status !== 0) {
    console.error(`build-if-stale: the build of packages/${pkg} failed`);
    process.exit(result.status ?? 1);
  }
}
