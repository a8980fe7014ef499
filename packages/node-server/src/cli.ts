#!/usr/bin/env node
import { runCli } from './cli/run-cli.js';

const argv = process.argv.slice(2);
const code = await runCli(argv, {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  cwd: process.cwd(),
});
if (argv[0] === 'serve') {
  // The server has drained and closed: leave now, even if a library still holds a timer or socket.
  process.exit(code);
} else {
  process.exitCode = code;
}
