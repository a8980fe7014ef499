// Structure checks run by CI: no import cycles in the core (type-only imports included), no
// pipeline module or provider adapter that imports a feature, and no production source file over
// the size a reader takes in at once.
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

// The metered pipeline and the operations it runs know no feature: features hook in at its stages
// (core/src/pipeline/feature.ts) and are registered in gateway.ts. Provider adapters know none either.
const PIPELINE_FOLDERS = ['pipeline', 'routing', 'metering', 'http', 'operations'];
const ADAPTER_FOLDERS = ['providers'];
const isProduction = (module) => module.endsWith('.ts') && !/\.test(-support)?\.ts$/.test(module);
const inFolder = (module, folders) => folders.some((folder) => module.startsWith(`${folder}/`));
const featureImports = Object.entries(graph.obj()).flatMap(([module, imports]) =>
  isProduction(module) && inFolder(module, [...PIPELINE_FOLDERS, ...ADAPTER_FOLDERS])
    ? imports.filter((target) => target.startsWith('features/')).map((target) => `${module} > ${target}`)
    : [],
);
if (featureImports.length > 0) {
  failed = true;
  console.error(`pipeline or provider modules importing a feature (${featureImports.length}):`);
  for (const edge of featureImports) console.error(`  ${edge}`);
} else {
  console.log(`${[...PIPELINE_FOLDERS, ...ADAPTER_FOLDERS].join(', ')}: no feature imported`);
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
