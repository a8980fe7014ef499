// Structure checks run by CI: no import cycles in the core (type-only imports included), and no
// production source file over the size a reader takes in at once.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import madge from 'madge';

const MAX_LINES = 320;
let failed = false;

const graph = await madge('packages/core/src', {
  fileExtensions: ['ts'],
  tsConfig: 'packages/core/tsconfig.json',
  detectiveOptions: { ts: { skipTypeImports: false } },
});
const cycles = graph.circular();
if (cycles.length > 0) {
  failed = true;
  console.error(`import cycles in packages/core/src (${cycles.length}):`);
  for (const cycle of cycles) console.error(`  ${cycle.join(' > ')}`);
} else {
  console.log(`packages/core/src: ${Object.keys(graph.obj()).length} modules, no import cycles`);
}

const sources = readdirSync('packages')
  .flatMap((pkg) =>
    readdirSync(join('packages', pkg, 'src'), { recursive: true }).map((f) =>
      join('packages', pkg, 'src', f),
    ),
  )
  .filter((f) => f.endsWith('.ts') && !/\.test(-support)?\.ts$/.test(f));
const long = sources
  .map((file) => ({ file, lines: readFileSync(file, 'utf8').split('\n').length }))
  .filter((f) => f.lines > MAX_LINES);
if (long.length > 0) {
  failed = true;
  console.error(`production files over ${MAX_LINES} lines:`);
  for (const { file, lines } of long) console.error(`  ${file}: ${lines}`);
} else {
  console.log(`${sources.length} production files, none over ${MAX_LINES} lines`);
}
process.exit(failed ? 1 : 0);
