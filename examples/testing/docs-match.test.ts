import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (path: string) => readFileSync(new URL(path, import.meta.url), 'utf8');

/** docs/testing.md shows these files verbatim; this keeps the page and the files from drifting. */
describe('docs/testing.md', () => {
  it.each(['config.ts', 'routing.test.ts', 'routing.node-test.ts'])(
    'includes examples/testing/%s as it is',
    (name) => {
      expect(read('../../docs/testing.md')).toContain(`\`\`\`ts\n${read(`./${name}`)}\`\`\``);
    },
  );
});
