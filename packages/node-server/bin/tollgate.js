#!/usr/bin/env node
// The `tollgate` command. npm links a package's bin when it installs it, which in this repository
// is before the build has written dist/, so the link points at this committed file, which runs the
// built CLI.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const cli = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write(
    `tollgate: the CLI is not built yet (${fileURLToPath(cli)} is missing).\n` +
      'Run `npm run build` at the root of the Tollgate repository, then try again.\n',
  );
  process.exit(1);
}
await import(cli.href);
