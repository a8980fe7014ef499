import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

/** A server the bench started: its pid, its URL, and the last lines it logged. */
export interface ServerProcess {
  label: string;
  pid: number;
  url: string;
  /** The first lines it wrote on stdout (Tollgate's first-start banner would be there). */
  stdout: string[];
  logTail(): string[];
  /** SIGTERM (the server drains), SIGKILL after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
}

const running = new Set<ChildProcess>();
// Whatever happens to the bench, nothing it started outlives it (by pid, never by name).
process.on('exit', () => {
  for (const child of running) if (child.exitCode === null && child.pid) process.kill(child.pid, 'SIGKILL');
});

/**
 * Spawns `node <args>` and resolves when a line on stdout or stderr gives its URL (`find` returns it),
 * or rejects after `timeoutMs` or when the process exits first, with its last log lines.
 */
export function startServer(
  label: string,
  args: string[],
  find: (line: string) => string | null,
  options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<ServerProcess> {
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...options.env },
  });
  running.add(child);
  const tail: string[] = [];
  const stdout: string[] = [];
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => running.delete(child));

  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (why: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (child.exitCode === null) child.kill('SIGKILL');
      reject(new Error(`${label}: ${why}\n  ${tail.slice(-15).join('\n  ')}`));
    };
    const timer = setTimeout(() => fail('did not start listening in time'), options.timeoutMs ?? 20_000);
    const onLine = (line: string, fromStdout: boolean) => {
      if (fromStdout && stdout.length < 50) stdout.push(line);
      tail.push(line);
      if (tail.length > 200) tail.shift();
      const url = settled ? null : find(line);
      if (!url || settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({
        label,
        pid: child.pid as number,
        url,
        stdout,
        logTail: () => [...tail],
        stop: async (graceMs = 5000) => {
          if (child.exitCode !== null || child.signalCode !== null) return;
          child.kill('SIGTERM');
          const killer = setTimeout(() => child.kill('SIGKILL'), graceMs);
          await exited;
          clearTimeout(killer);
        },
      });
    };
    createInterface({ input: child.stdout }).on('line', (line) => onLine(line, true));
    createInterface({ input: child.stderr }).on('line', (line) => onLine(line, false));
    child.once('exit', (code, signal) => fail(`exited early (code ${code}, signal ${signal})`));
    child.once('error', (error) => fail(error.message));
  });
}

/** Finds `{"url": …}` printed by the bench's own servers. */
export function jsonUrl(line: string): string | null {
  if (!line.startsWith('{')) return null;
  try {
    const url = (JSON.parse(line) as { url?: unknown }).url;
    return typeof url === 'string' ? url : null;
  } catch {
    return null;
  }
}
