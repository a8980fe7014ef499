import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/*
 * Memory of a target: the process and its descendants (the workers of `--workers N`), read from
 * /proc/<pid>/status (Linux), else from `ps`. Sampled while a cell runs; the peak is what is reported.
 */

/** Whether this system has /proc (Linux); `ps` stands in elsewhere. */
export const hasProc = (() => {
  try {
    readFileSync('/proc/self/status');
    return true;
  } catch {
    return false;
  }
})();

/** Every process's `/proc/<pid>/stat` line, by pid (Linux; empty elsewhere). */
export function procStats(): Map<number, string> {
  const stats = new Map<number, string>();
  if (!hasProc) return stats;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      stats.set(Number(entry), readFileSync(`/proc/${entry}/stat`, 'utf8'));
    } catch {
      // The process exited while we were looking.
    }
  }
  return stats;
}

/** The pid and every descendant still alive (from `stats`, one reading of /proc, when given). */
export function processTree(root: number, stats: Map<number, string> = procStats()): number[] {
  if (!hasProc) return [root];
  const parentOf = new Map<number, number>();
  for (const [pid, stat] of stats) {
    // The command name may hold spaces and parentheses: the fields start after the last ')'.
    parentOf.set(pid, Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) {
    for (const [pid, ppid] of parentOf) if (ppid === tree[i] && !tree.includes(pid)) tree.push(pid);
  }
  return tree;
}

/** A `/proc/<pid>/status` field in kB (VmRSS: now, VmHWM: the peak since start); 0 when gone. */
export function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  if (!hasProc) {
    try {
      return Number(execFileSync('ps', ['-o', 'rss=', '-p', String(pid)], { encoding: 'utf8' }).trim()) || 0;
    } catch {
      return 0;
    }
  }
  try {
    const match = readFileSync(`/proc/${pid}/status`, 'utf8').match(
      new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'),
    );
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

/** Samples the summed RSS of a process tree every `intervalMs` until stopped; returns the peak in MB. */
export function sampleRss(root: number, intervalMs = 100): { stop(): number } {
  let pids = processTree(root);
  let peakKb = 0;
  let ticks = 0;
  const sample = () => {
    // Workers may be replaced: look at the tree again now and then, not on every tick.
    if (++ticks % 20 === 0) pids = processTree(root);
    let kb = 0;
    for (const pid of pids) kb += statusKb(pid, 'VmRSS');
    peakKb = Math.max(peakKb, kb);
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return peakKb / 1024;
    },
  };
}

/** The high-water mark of each process of the tree, in MB: the largest single one and the sum. */
export function peakHwm(root: number): { maxMb: number; sumMb: number; processes: number } {
  const kbs = processTree(root).map((pid) => statusKb(pid, hasProc ? 'VmHWM' : 'VmRSS'));
  return {
    maxMb: Math.max(0, ...kbs) / 1024,
    sumMb: kbs.reduce((a, b) => a + b, 0) / 1024,
    processes: kbs.length,
  };
}
