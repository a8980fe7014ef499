import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TurnBatchedOutput } from './turn-batched-output.js';

function capture() {
  const writes: string[] = [];
  return { writes, out: { write: (text: string) => writes.push(text), isTTY: false } };
}

describe('TurnBatchedOutput', () => {
  it('writes the lines of one turn in one write at its check phase, and the next turn’s in another', async () => {
    const { writes, out } = capture();
    const output = new TurnBatchedOutput(out);

    output.write('a\n');
    output.write('b\n');
    await Promise.resolve();
    expect(writes).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual(['a\nb\n']);

    output.write('c\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual(['a\nb\n', 'c\n']);
    expect(output.isTTY).toBe(false);
  });

  it('flush() writes what is held at once and calls back; nothing is written twice', async () => {
    const { writes, out } = capture();
    const output = new TurnBatchedOutput(out);
    output.write('a\n');
    let called = false;
    output.flush(() => {
      called = true;
    });
    expect(writes).toEqual(['a\n']);
    expect(called).toBe(true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual(['a\n']);
  });

  it('a process that exits in the turn it wrote still writes the line, and what it writes while exiting', () => {
    const module = join(import.meta.dirname, 'turn-batched-output.ts');
    const script = `
      const { TurnBatchedOutput } = await import(${JSON.stringify(module)});
      const output = new TurnBatchedOutput(process.stderr);
      output.write('fatal line\\n');
      process.on('exit', () => output.write('written while exiting\\n'));
      process.exit(3);
    `;
    let stderr = '';
    try {
      execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
    } catch (error) {
      stderr = String((error as { stderr: Buffer }).stderr);
    }
    expect(stderr).toBe('fatal line\nwritten while exiting\n');
  });
});
