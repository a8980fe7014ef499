#!/usr/bin/env bash
# Packs every workspace package and installs the tarballs into a scratch project outside the
# repository (plain npm, no workspace), then runs there: an Express app and a Hono app that mount
# the gateway and answer a chat request through a loopback fake provider, the type check of
# examples/testing against the packed type declarations, and the examples/testing tests under
# vitest, node:test and Jest. Needs the npm registry (for express, hono, the runners) and nothing
# else; better-sqlite3 compiles from source when no prebuilt binary can be fetched (~2 minutes).
#   scripts/packed-install/check-packed-install.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

step() { printf '\n--> %s\n' "$*"; }

cd "$repo"
step 'build what is stale, pack every workspace package'
node scripts/build-if-stale.mjs
mkdir "$scratch/tarballs"
npm pack --workspaces --pack-destination "$scratch/tarballs" --silent >/dev/null
ls "$scratch/tarballs"

# Versions of the third-party pieces as the repository locks them (so npm's cache serves them).
version() { node -p "require('$repo/node_modules/$1/package.json').version"; }
step 'install the tarballs into a scratch project outside the repository'
mkdir "$scratch/app"
cd "$scratch/app"
cat >package.json <<'JSON'
{ "name": "packed-install-check", "private": true, "type": "module" }
JSON
npm install --no-audit --no-fund --loglevel=error \
  "$scratch"/tarballs/*.tgz \
  "express@$(version express)" "hono@$(version hono)" "@hono/node-server@$(version @hono/node-server)" \
  "vitest@$(version vitest)" "tsx@$(version tsx)" "typescript@$(version typescript)" \
  "@types/node@$(version @types/node)" "jest@30.5.2"
# Nothing may resolve back into the repository.
if find node_modules/@tollgate -maxdepth 1 -type l | grep -q .; then
  echo 'packed-install: @tollgate packages are symlinks, not installed tarballs' >&2
  exit 1
fi

cp "$here"/app/*.mjs .
mkdir examples
cp "$repo"/examples/testing/config.ts "$repo"/examples/testing/routing.test.ts \
  "$repo"/examples/testing/routing.node-test.ts examples/

step 'an Express app and a Hono app mount the gateway'
node express-app.mjs
node hono-app.mjs

step 'examples/testing type-checks against the packed declarations'
cat >tsconfig.json <<'JSON'
{
  "compilerOptions": {
    "target": "ES2022",
    "module": "NodeNext",
    "moduleResolution": "NodeNext",
    "strict": true,
    "skipLibCheck": true,
    "types": ["node"],
    "outDir": "build"
  },
  "include": ["examples"]
}
JSON
npx tsc -p tsconfig.json

step 'examples/testing under vitest'
npx vitest run --root . examples/routing.test.ts

step 'examples/testing under node:test'
node --import tsx --test examples/routing.node-test.ts

step 'the kit under Jest (ESM)'
NODE_OPTIONS=--experimental-vm-modules npx jest --rootDir . --testMatch '**/routing.jest.test.mjs' --transform '{}'

echo 'packed-install: every package installs from its tarball and works outside the repository'
