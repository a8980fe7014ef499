import type { Catalogue, HttpClient, WalkClock } from '@tollgate/core';
import { FakeUpstream, pathOf, UnansweredUpstreamError } from './fake-upstream.js';

/** The fake upstream of every provider of a catalogue, behind one `HttpClient` the gateway calls. */
export interface UpstreamRouter {
  http: HttpClient;
  upstream(name: string): FakeUpstream;
  /** The first request no fake could answer since the last call, then forgets it; else `null`. */
  takeUnanswered(): UnansweredUpstreamError | null;
}

/**
 * Sends each request to the fake of the provider whose `base_url` it starts with (the longest
 * match). Two providers on one `base_url` could not be told apart, so they are refused up front.
 */
export function createUpstreamRouter(catalogue: Catalogue, clock: WalkClock): UpstreamRouter {
  const fakes = new Map<string, FakeUpstream>();
  const byBaseUrl = new Map<string, FakeUpstream>();
  for (const provider of catalogue.providers.values()) {
    const fake = new FakeUpstream(provider.id, provider.format, clock);
    fakes.set(provider.id, fake);
    if (provider.format === 'demo') continue;
    const other = byBaseUrl.get(provider.baseUrl);
    if (other) {
      throw new Error(
        `@tollgate/testing: providers "${other.name}" and "${provider.id}" share base_url ${provider.baseUrl}; ` +
          'give each its own (any URL: nothing is sent to it)',
      );
    }
    byBaseUrl.set(provider.baseUrl, fake);
  }
  // Longest first, so `…/v1/anthropic` wins over `…/v1`.
  const prefixes = [...byBaseUrl.entries()].sort((a, b) => b[0].length - a[0].length);
  let unanswered: UnansweredUpstreamError | null = null;

  return {
    http: {
      async request(url, init) {
        const match = prefixes.find(
          ([base]) => url === base || url.startsWith(`${base}/`) || url.startsWith(`${base}?`),
        );
        try {
          if (!match) {
            throw new UnansweredUpstreamError(
              `@tollgate/testing: no provider of the config has a base_url for ${init.method} ${url} (path ${pathOf(url)})`,
            );
          }
          return await match[1].answer(url, init);
        } catch (error) {
          if (error instanceof UnansweredUpstreamError) unanswered ??= error;
          throw error;
        }
      },
    },
    upstream(name) {
      const fake = fakes.get(name);
      if (!fake) {
        const names = [...fakes.keys()].map((n) => `"${n}"`).join(', ');
        throw new Error(`@tollgate/testing: no provider "${name}" in the config (it has ${names})`);
      }
      return fake;
    },
    takeUnanswered() {
      const error = unanswered;
      unanswered = null;
      return error;
    },
  };
}
