import { buildCatalogue } from '../catalogue/catalogue.js';
import { createGateway } from '../gateway.js';
import { FakeClock } from '../routing/fake-clock.js';
import type { Storage } from '../storage/types.js';

const silent = { info() {}, warn() {}, error() {} };

/**
 * `/healthz` of a gateway over `storage`, for an adapter's own test of its database turning
 * read-only: each call moves the clock past the 1 s answer cache and returns status and body.
 */
export function healthOf(storage: Storage): () => Promise<{ status: number; body: unknown }> {
  const clock = new FakeClock(1_700_000_000_000);
  const gateway = createGateway(storage, buildCatalogue({ providers: {}, models: [] }), {
    clock,
    logger: silent,
    // No key is ever used here; a listening connection would only stand in the way of the
    // adapters' tests that end every session of the database.
    authCacheMs: 0,
  });
  return async () => {
    clock.advance(1_000);
    const response = await gateway.fetch(new Request('http://gateway.test/healthz'));
    return { status: response.status, body: (await response.json()) as unknown };
  };
}
