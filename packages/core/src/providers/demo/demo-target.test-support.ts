import type { CallOptions, UpstreamTarget } from '../provider-adapter.js';

/** An attempt on the example config's `demo` provider, for `upstreamModel`. */
export function demoTarget(upstreamModel: string): UpstreamTarget {
  return {
    provider: {
      id: 'demo',
      format: 'demo',
      baseUrl: '',
      apiKey: null,
      headers: {},
      timeoutMs: null,
      streamIdleTimeoutMs: 60_000,
    },
    upstreamModel,
    maxOutputTokens: 4096,
  };
}

/** Call options with a signal that is never aborted. */
export const demoCall = (): CallOptions => ({ signal: new AbortController().signal });
