import { ClientClosedError, GatewayError } from '../errors/gateway-error.js';
import { encodeText, SSE_HEADERS } from '../http/responses.js';
import { keepHoldAlive } from '../metering/keep-hold-alive.js';
import { type Charge, gatewayCostView } from '../metering/price-usage.js';
import { estimatedUsage, type MeteredUsage, meteredUsage } from '../metering/usage.js';
import type { ChunkWatch } from '../pipeline/call.js';
import { chargeLinesOf } from '../pipeline/features-of.js';
import { settledHooks } from '../pipeline/run-hooks.js';
import { takeReadyChunks } from '../providers/sse-chunks.js';
import { UpstreamError } from '../providers/upstream-error.js';
import { failRecord } from '../records/request-log.js';
import {
  type AttemptControl,
  type PlannedRoute,
  type WalkClock,
  walkRoutes,
} from '../routing/walk-routes.js';
import type { InferenceBody, OpenedUpstream, StreamingOperation } from './inference-operation.js';
import { type MeteredCall, servedView, upstreamTarget, walkOptions } from './metered-call.js';
import { failCall, recordRoute, recordUsage, settleCall } from './settle-call.js';

/** Streaming deadline for the whole routing walk (until the first chunk is in hand). */
const STREAM_DEADLINE_MS = 300_000;

interface OpenedStream {
  stream: OpenedUpstream<unknown>;
  iterator: AsyncIterator<unknown>;
  first: IteratorResult<unknown>;
  /** Aborts the upstream call after the walk is over (client gone). */
  upstream: AbortController;
}

/**
 * A streamed answer (spec "Streaming response"). The routing walk lasts until a route yields its
 * first chunk, so a route that fails before any byte reaches the client is still retried or failed
 * over. Then chunks are forwarded as they arrive (per pull, the next chunk and every one after it
 * that needs no further upstream read, in one write; nothing waits for more), framed by the
 * operation's stream writer, which also writes the events that end the stream: usage and cost after
 * a complete stream, the error first after a break (for chat: `event: error` with the envelope, the
 * terminal chunk without `finish_reason`, `[DONE]`). The
 * charge is settled exactly once, on whichever of end, break or cancel comes first.
 */
export async function streamMeteredCall<Body extends InferenceBody>(
  call: MeteredCall<Body>,
): Promise<Response> {
  const { deps } = call;
  const streaming = call.op.stream as StreamingOperation<Body, unknown>;
  let opened: Awaited<ReturnType<typeof walkRoutes<OpenedStream>>>;
  try {
    opened = await walkRoutes(
      call.plan.routes,
      (route, control) => openStream(call, streaming, route, control),
      walkOptions(call, STREAM_DEADLINE_MS),
    );
  } catch (error) {
    return failCall(call, error);
  }
  const { route } = opened;
  recordRoute(call, route, opened);
  const { stream, iterator, upstream } = opened.value;
  const idleTimeoutMs = route.endpoint.provider.streamIdleTimeoutMs;
  const stopKeepingHold = keepHoldAlive(deps, call.reservation.id, deps.reservationTtlMs);
  const served = servedView(call, route, opened.attempts);
  let pending: IteratorResult<unknown> | null = opened.value.first;
  // Output counts as delivered once the consumer comes back for what follows it (for the Node
  // server: once its bytes were written to the connection). The chunk handed over last is
  // `unconfirmed` until then: a client gone before taking it never received it.
  let deliveredChars = 0;
  let unconfirmedChars = 0;
  let producedOutput = false;
  let finishReason: string | null = null;
  let ttftMs: number | null = null;
  let finished = false;
  let brokenBy: unknown = null;
  // The hooks' watchers (stage `stream`): each sees a chunk before it is forwarded, and may stop it.
  const watchers: ChunkWatch[] = [];
  for (const hook of call.hooks) {
    const watcher = hook.watch?.(call.record);
    if (watcher) watchers.push(watcher);
  }
  const writer = streaming.writer(served, call.body);

  /** Meters and settles once; returns the events that end the stream. */
  const finish = async (how: 'complete' | 'broken' | 'cancelled'): Promise<string> => {
    finished = true;
    stopKeepingHold();
    const reported = stream.usage();
    const worst = call.worstCase.usage;
    // "Never read" (Cost rule 8): the client went away before any content was delivered (see
    // `deliveredChars`); charged at the ceiling it was held against.
    const nothingRead = how === 'cancelled' && deliveredChars === 0;
    const usage: MeteredUsage =
      how === 'complete' && reported
        ? meteredUsage(reported)
        : nothingRead
          ? { ...estimatedUsage(worst, reported, 0), completionTokens: worst.completionTokens }
          : estimatedUsage(worst, reported, deliveredChars);
    const charge: Charge = recordUsage(call, route, {
      usage,
      // The zero-completion waiver is for answers that ended empty, never for an abandoned stream.
      producedOutput: producedOutput || how === 'cancelled',
      finishReason: how === 'complete' ? finishReason : null,
    });
    if (how === 'broken') {
      failRecord(call.record, brokenStreamError(brokenBy, false), 'broken_stream');
      call.record.httpStatus = 200;
    } else if (how === 'cancelled') {
      failRecord(call.record, new ClientClosedError('The client went away during the stream.'));
    }
    const settled = await settleCall(call, route, ttftMs);
    if (settled && how === 'complete') await settledHooks({ call, route, usage, finishReason, answer: null });
    return writer.end({
      finishReason: how === 'complete' ? finishReason : null,
      usage,
      gateway: settled
        ? gatewayCostView(charge, served, chargeLinesOf(deps))
        : { request_id: call.requestId, cost_micros: 0, cost_usd: 0, error: 'settle_failed' },
      error: how === 'broken' ? brokenStreamError(brokenBy, true) : null,
      createdAt: call.startedAt,
    });
  };

  /** A break after the first byte: the writer's error and end events. */
  const breakStream = async (controller: ReadableStreamDefaultController<Uint8Array>, error: unknown) => {
    upstream.abort();
    brokenBy = error;
    controller.enqueue(encodeText(await finish('broken')));
    controller.close();
  };

  const takeReady = takeReadyChunks(iterator);
  // The events of the chunks forwarded in this pull, and what stopped the stream (an output guardrail).
  let events = '';
  let blockedBy: unknown = null;
  /**
   * Meters one chunk and adds its event to `events`; false (nothing added) when an output guardrail
   * fires on it: the stream stops before the chunk that completed the match.
   */
  const forward = (chunk: unknown): boolean => {
    for (const watcher of watchers) {
      const stop = watcher.see(chunk);
      if (stop) {
        blockedBy = stop;
        return false;
      }
    }
    const { reading, text } = writer.write(chunk);
    unconfirmedChars += reading.chars;
    if (reading.produced) producedOutput = true;
    if (reading.finishReason) finishReason = reading.finishReason;
    ttftMs ??= deps.now() - call.startedAt;
    events += text;
    return true;
  };

  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        // A drain's cut breaks the stream off where it is, whether or not a read is under way.
        call.cut = (reason) => {
          if (!finished) breakStream(controller, reason).catch(() => {});
        };
        // A cut that came as the walk ended found no stream to break yet.
        const cutBefore: unknown = call.signal.reason;
        if (cutBefore instanceof GatewayError) queueMicrotask(() => call.cut(cutBefore));
      },
      async pull(controller) {
        if (finished) return;
        // The consumer came back: what it took last was delivered.
        deliveredChars += unconfirmedChars;
        unconfirmedChars = 0;
        // Reads on until there is something to send: a writer may hold a chunk's events back.
        for (;;) {
          let next: IteratorResult<unknown>;
          try {
            next = pending ?? (await nextWithin(iterator, idleTimeoutMs, deps.clock));
            pending = null;
          } catch (error) {
            if (finished) return;
            return breakStream(controller, error);
          }
          if (finished) return;
          if (next.done) {
            controller.enqueue(encodeText(await finish('complete')));
            controller.close();
            return;
          }
          // This chunk and those the upstream's reads already hold after it leave together, in one
          // write; before any output, only up to the first chunk with output (the time to the first
          // token waits for nothing after it).
          const afterOutput = producedOutput;
          let forwarded = forward(next.value);
          if (forwarded && takeReady && afterOutput) {
            for (const chunk of takeReady()) {
              forwarded = forward(chunk);
              if (!forwarded) break;
            }
          }
          while (forwarded && takeReady && !producedOutput) {
            const [chunk] = takeReady(1);
            if (chunk === undefined) break;
            forwarded = forward(chunk);
          }
          const sent = events !== '';
          if (sent) controller.enqueue(encodeText(events));
          events = '';
          if (!forwarded) return breakStream(controller, blockedBy);
          if (sent) return;
        }
      },
      async cancel() {
        if (finished) return;
        upstream.abort();
        await finish('cancelled');
      },
    },
    { highWaterMark: 0 },
  );
  return new Response(body, { status: 200, headers: SSE_HEADERS });
}

/** One attempt: open the upstream stream and read its first chunk (a failure here can still fail over). */
async function openStream<Body extends InferenceBody>(
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
function nextWithin<T>(
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

/**
 * The error of a stream that broke after it started: the gateway's own refusal as it is (an output
 * guardrail), `upstream_timeout` when the provider went silent, else `upstream_error`. The caller's message may say why; the record keeps a fixed one.
 */
function brokenStreamError(cause: unknown, forCaller: boolean): GatewayError {
  // A refusal of the gateway's own (an output guardrail) is told as it is.
  if (cause instanceof GatewayError) return cause;
  const timedOut = cause instanceof UpstreamError && cause.kind === 'timeout';
  const code = timedOut ? 'upstream_timeout' : 'upstream_error';
  if (!forCaller) {
    return new GatewayError(
      code,
      timedOut
        ? 'The provider stream stalled after it started.'
        : 'The provider stream broke after it started.',
    );
  }
  const why = cause instanceof UpstreamError ? cause.message : 'connection lost';
  const error = new GatewayError(code, `The provider stream ${timedOut ? 'stalled' : 'broke'}: ${why}`);
  // The writer may tell its caller more (the Responses wire names the upstream's error code).
  error.cause = cause;
  return error;
}
