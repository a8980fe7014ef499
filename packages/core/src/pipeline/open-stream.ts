import { UpstreamError } from '../providers/upstream-error.js';
import type { AttemptControl, PlannedRoute, WalkClock } from '../routing/walk-routes.js';
import type { InferenceBody, OpenedUpstream, StreamingOperation } from './inference-operation.js';
import { type MeteredCall, upstreamTarget } from './metered-call.js';

/** A route's stream, open and with its first chunk in hand. */
export interface OpenedStream {
  stream: OpenedUpstream<unknown>;
  iterator: AsyncIterator<unknown>;
  first: IteratorResult<unknown>;
  /** Aborts the upstream call after the walk is over (client gone). */
  upstream: AbortController;
}

/** One attempt: open the upstream stream and read its first chunk (a failure here can still fail over). */
export async function openStream<Body extends InferenceBody>(
  call: MeteredCall<Body>,
  streaming: StreamingOperation<Body, unknown>,
  route: PlannedRoute,
  control: AttemptControl,
): Promise<OpenedStream> {
  const { signal } = control;
  const upstream = new AbortController();
  const forward = () => upstream.abort(signal.reason);
  signal.addEventListener('abort', forward, { once: true });
  try {
    const adapter = call.deps.providers(route.endpoint.provider);
    const stream = await streaming.open(adapter, call.body, upstreamTarget(call, route), {
      signal: upstream.signal,
    });
    const iterator = stream.chunks[Symbol.asyncIterator]();
    // A provider silent for too long before its first chunk is a timeout: the walk fails over.
    const first = await nextWithin(iterator, route.endpoint.provider.streamIdleTimeoutMs, call.deps.clock);
    return { stream, iterator, first, upstream };
  } catch (error) {
    upstream.abort();
    throw error;
  } finally {
    signal.removeEventListener('abort', forward);
  }
}

/**
 * The next chunk, or an `UpstreamError` of kind `timeout` when the provider sends nothing for
 * `idleMs` (a stalled stream would otherwise hold the client until the walk's deadline).
 */
export function nextWithin<T>(
  iterator: AsyncIterator<T>,
  idleMs: number,
  clock: WalkClock,
): Promise<IteratorResult<T>> {
  return new Promise((resolve, reject) => {
    const cancel = clock.schedule(
      () => reject(new UpstreamError('timeout', `the provider sent nothing for ${idleMs} ms`)),
      idleMs,
    );
    iterator.next().then(
      (result) => {
        cancel();
        resolve(result);
      },
      (error: unknown) => {
        cancel();
        reject(error);
      },
    );
  });
}
