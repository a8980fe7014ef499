#!/usr/bin/env node
// The package registry reachable from our build machines serves only the linux-x64/arm64 (glibc)
// builds of platform-specific optional packages (biome, rollup). npm then writes a lockfile without
// the other platforms' entries, and `npm ci` refuses it as "out of sync". This adds those entries
// back, as npm would on an open registry: optional, with their os/cpu/libc, so every platform skips
// them except its own. Run it after any `npm install` that rewrites package-lock.json:
//   node scripts/complete-lockfile.mjs
import { readFileSync, writeFileSync } from 'node:fs';

const LOCK = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(LOCK, 'utf8'));
const packages = lock.packages;

/** os, cpu and libc from a platform package name such as `cli-linux-x64-musl` or `rollup-win32-ia32-msvc`. */
function platformOf(name) {
  const tail = name
    .split('/')
    .pop()
    .replace(/^(cli|rollup)-/, '');
  const [os, cpu, abi] = tail.split('-');
  const platform = { os: [os], cpu: [cpu] };
  if (os === 'linux') platform.libc = [abi?.startsWith('musl') ? 'musl' : 'glibc'];
  return platform;
}

const FAMILIES = [/^@biomejs\/cli-/, /^@rollup\/rollup-/];
let added = 0;
for (const entry of Object.values(packages)) {
  for (const [dep, version] of Object.entries(entry.optionalDependencies ?? {})) {
    if (!FAMILIES.some((family) => family.test(dep))) continue;
    const key = `node_modules/${dep}`;
    if (packages[key]) continue;
    // Keys in the order npm writes them (version first, then alphabetical), so a later
    // `npm install` leaves the file as it is.
    const fields = { dev: entry.dev, license: entry.license ?? 'MIT', optional: true, ...platformOf(dep) };
    packages[key] = {
      version,
      ...Object.fromEntries(
        Object.entries(fields)
          .filter(([, v]) => v)
          .sort(),
      ),
    };
    added++;
  }
}
const sorted = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
);
lock.packages = sorted;
writeFileSync(LOCK, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`complete-lockfile: added ${added} platform entries`);
