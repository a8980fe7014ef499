import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { HOOK_STAGES, STAGES } from './stages.js';

const architecture = readFileSync(new URL('../../../../docs/architecture.md', import.meta.url), 'utf8');

describe('STAGES', () => {
  it('names every hook at a stage, hooks in stage order', () => {
    const order = Object.values(HOOK_STAGES).map((stage) => STAGES.indexOf(stage));
    expect(order.every((index) => index >= 0)).toBe(true);
    expect(order).toEqual([...order].sort((a, b) => a - b));
  });

  it('are drawn in docs/architecture.md in the same order, with every hook', () => {
    const table = architecture.slice(architecture.indexOf('## Stages and hooks'));
    const rows = table.slice(0, table.indexOf('### How to add a feature'));
    const drawn = [...rows.matchAll(/^ (\w+) {2,}/gm)].map((m) => m[1]);
    expect(drawn.filter((name) => (STAGES as readonly string[]).includes(name!))).toEqual([...STAGES]);
    for (const hook of Object.keys(HOOK_STAGES)) expect(rows).toContain(hook);
  });
});
