// The few parts of autocannon@8's programmatic API the bench uses (the package ships no types).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  interface AutocannonRequest {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    onResponse?: (status: number, body: string, context: Record<string, unknown>) => void;
  }

  interface AutocannonOptions {
    url: string;
    connections?: number;
    duration?: number;
    pipelining?: number;
    timeout?: number;
    sampleInt?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    requests?: AutocannonRequest[];
    /** Called once per connection, before its first request. */
    setupClient?: (client: { setHeaders(headers: Record<string, string>): void }) => void;
  }

  interface AutocannonResult {
    errors: number;
    timeouts: number;
    non2xx: number;
    resets: number;
    duration: number;
    /** Requests written to the sockets (`sent`). */
    requests: { sent: number };
    statusCodeStats: Record<string, { count: number }>;
  }

  interface Instance extends EventEmitter {
    stop(): void;
  }

  function autocannon(
    options: AutocannonOptions,
    callback: (error: Error | null, result: AutocannonResult) => void,
  ): Instance;

  export default autocannon;
}
