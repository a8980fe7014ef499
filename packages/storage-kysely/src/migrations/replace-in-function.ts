/**
 * A function of an earlier migration as a `CREATE OR REPLACE` with passages of its text changed,
 * each `[passage, replacement]` found exactly once (else this throws, naming the migration): a
 * later migration states what it changes in the function instead of copying the whole text.
 */
export function replaceInFunction(
  migration: string,
  create: string,
  changes: readonly (readonly [passage: string, replacement: string])[],
): string {
  const head = /^CREATE (OR REPLACE )?FUNCTION /.exec(create);
  if (!head) throw new Error(`migration ${migration}: the text to replace in is not a CREATE FUNCTION`);
  let text = `CREATE OR REPLACE FUNCTION ${create.slice(head[0].length)}`;
  for (const [passage, replacement] of changes) {
    const parts = text.split(passage);
    if (parts.length !== 2) {
      throw new Error(
        `migration ${migration}: a passage to replace occurs ${parts.length - 1} times, not once: ${passage.slice(0, 60)}`,
      );
    }
    text = parts.join(replacement);
  }
  return text;
}
