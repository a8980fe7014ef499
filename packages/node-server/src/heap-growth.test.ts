import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  applyHeapGrowingPercent,
  DEFAULT_HEAP_GROWING_PERCENT,
  HeapSettingError,
  parseHeapGrowingPercent,
} from './heap-growth.js';

describe('parseHeapGrowingPercent', () => {
  it("defaults to the store's cap when unset or empty, and reads a whole number from 0 to 1000", () => {
    expect(DEFAULT_HEAP_GROWING_PERCENT).toEqual({ sqlite: 30, postgres: 60 });
    expect(parseHeapGrowingPercent(undefined, 'sqlite')).toBe(30);
    expect(parseHeapGrowingPercent(' ', 'sqlite')).toBe(30);
    expect(parseHeapGrowingPercent(undefined, 'postgres')).toBe(60);
    expect(parseHeapGrowingPercent('', 'postgres')).toBe(60);
    expect(parseHeapGrowingPercent('0', 'postgres')).toBe(0);
    expect(parseHeapGrowingPercent(' 50 ', 'sqlite')).toBe(50);
    expect(parseHeapGrowingPercent('1000', 'postgres')).toBe(1000);
  });

  it('refuses anything else, naming the value', () => {
    for (const bad of ['-1', '1001', '12.5', '30%', 'lots', '1e2']) {
      expect(() => parseHeapGrowingPercent(bad, 'sqlite')).toThrow(HeapSettingError);
    }
    expect(() => parseHeapGrowingPercent('lots', 'postgres')).toThrow(/TOLLGATE_HEAP_GROWING_PERCENT "lots"/);
  });
});

describe('applyHeapGrowingPercent', () => {
  const applied = (percent: number, execArgv: string[]) => {
    const flags: string[] = [];
    const result = applyHeapGrowingPercent(percent, execArgv, (text) => flags.push(text));
    return { result, flags };
  };

  it('sets the flag for the rest of the process', () => {
    expect(applied(30, [])).toEqual({ result: 30, flags: ['--heap-growing-percent=30'] });
  });

  it("leaves V8 its own sizing at 0, and the command line's own setting alone", () => {
    expect(applied(0, [])).toEqual({ result: null, flags: [] });
    expect(applied(30, ['--heap-growing-percent=80'])).toEqual({ result: null, flags: [] });
    expect(applied(30, ['--heap-growing-percent', '80'])).toEqual({ result: null, flags: [] });
    expect(applied(30, ['--max-old-space-size=512'])).toEqual({
      result: 30,
      flags: ['--heap-growing-percent=30'],
    });
  });
});

describe('the cap, set in a running process', () => {
  // A child process keeps ~300k small objects live while allocating 12M more; it prints the peak
  // heap V8 committed. Memory, not time, so the machine's load does not move it.
  const peakHeapMb = async (percent: number): Promise<number> => {
    const script = `
      import { applyHeapGrowingPercent } from ${JSON.stringify(new URL('./heap-growth.ts', import.meta.url).href)};
      applyHeapGrowingPercent(${percent});
      let live = []; let peak = 0;
      for (let round = 0; round < 60; round++) {
        for (let i = 0; i < 200000; i++) live.push({ a: i, b: 'x' + i });
        if (live.length > 600000) live = live.slice(-300000);
        peak = Math.max(peak, process.memoryUsage().heapTotal);
      }
      console.log(peak / 1048576);`;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      { timeout: 60_000 },
    );
    return Number(stdout.trim());
  };

  it("keeps the heap well below V8's own sizing (the flag works after start-up)", async () => {
    const [own, capped] = await Promise.all([peakHeapMb(0), peakHeapMb(30)]);
    expect(capped).toBeLessThan(own * 0.6);
  }, 60_000);
});
