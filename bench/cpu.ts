import { readFileSync } from 'node:fs';
import { hasProc, processTree, procStats } from './rss.js';

/*
 * CPU time of a target while a cell runs, from /proc (Linux; elsewhere the figures are null): every
 * thread of every process of the tree (the workers of `--workers N`, V8's GC helpers, the SQLite
 * checkpointer), and the main threads alone, where a Node server's JavaScript runs. Divided by the
 * requests the cell answered it gives µs of CPU per request: how much work a request is, and where.
 * It is no steadier than RPS from one cell to the next (±7 % in an A/A run); `ab.ts` takes medians.
 */

/** Clock ticks per second of /proc's utime and stime (USER_HZ, 100 on every Linux in use). */
const TICKS_PER_S = 100;

/** utime + stime of a /proc stat line, in ms; the fields start after the command name's last ')'. */
export function cpuMsOf(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_S;
}

function readCpuMs(path: string): number {
  try {
    return cpuMsOf(readFileSync(path, 'utf8'));
  } catch {
    // The process or thread exited while we were looking.
    return 0;
  }
}

interface CpuReading {
  /** Every thread of the process, per pid. */
  process: Map<number, number>;
  /** The main thread (tid = pid), per pid. */
  main: Map<number, number>;
}

function read(pids: readonly number[]): CpuReading {
  const reading: CpuReading = { process: new Map(), main: new Map() };
  for (const pid of pids) {
    // /proc/<pid>/stat counts the threads that exited too; the main thread is task <pid>.
    reading.process.set(pid, readCpuMs(`/proc/${pid}/stat`));
    reading.main.set(pid, readCpuMs(`/proc/${pid}/task/${pid}/stat`));
  }
  return reading;
}

/** What a target's process tree spent between `start` and `stop`, in ms of CPU (null without /proc). */
export interface CpuSpent {
  /** Every thread of every process. */
  processMs: number;
  /** The main threads only (one per process). */
  mainMs: number;
  /** With `databaseCommand`: its processes on this machine; absent when none was running. */
  databaseMs?: number;
}

/**
 * Starts counting the CPU of `root` and its descendants; `stop()` gives what they spent since. With
 * `databaseCommand` (`postgres`), also what every process on this machine with that command spent
 * (the database server's backends, WAL writer, checkpointer and autovacuum workers), those alive at
 * both ends: on one machine a Postgres target's gateway and its database share the cores, so the
 * work of one of its requests is the two together. A server on another machine counts nothing.
 */
export function measureCpu(root: number, databaseCommand?: string): { stop(): CpuSpent | null } {
  if (!hasProc) return { stop: () => null };
  // One reading of /proc serves the tree and the database's processes.
  const stats = procStats();
  const pids = processTree(root, stats);
  const before = read(pids);
  const databaseBefore = databaseCommand ? cpuOfCommand(databaseCommand, stats) : new Map<number, number>();
  return {
    stop() {
      // The same processes as at the start: a worker started meanwhile has no "before".
      const after = read(pids);
      const spent = (kind: keyof CpuReading) =>
        pids.reduce(
          (ms, pid) => ms + Math.max(0, (after[kind].get(pid) ?? 0) - (before[kind].get(pid) ?? 0)),
          0,
        );
      const result: CpuSpent = { processMs: spent('process'), mainMs: spent('main') };
      if (databaseBefore.size > 0) {
        // A process gone by now reads 0: what it spent is lost rather than counted negative.
        result.databaseMs = [...databaseBefore].reduce(
          (ms, [pid, was]) => ms + Math.max(0, readCpuMs(`/proc/${pid}/stat`) - was),
          0,
        );
      }
      return result;
    },
  };
}

/** The CPU (ms) of each process whose command (the `comm` of its stat line) is `command`, by pid. */
function cpuOfCommand(command: string, stats: Map<number, string>): Map<number, number> {
  const cpu = new Map<number, number>();
  for (const [pid, stat] of stats) {
    if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) === command) cpu.set(pid, cpuMsOf(stat));
  }
  return cpu;
}

/** µs of CPU per answered request, or null without a reading or an answer. */
export function microsPerRequest(ms: number | undefined, requests: number): number | null {
  return ms === undefined || requests <= 0 ? null : (ms * 1000) / requests;
}
