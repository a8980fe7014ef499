import { ClientClosedError, GatewayError } from '../errors/gateway-error.js';
import { encodeText, SSE_HEADERS } from '../http/responses.js';
import { keepHoldAlive } from '../metering/keep-hold-alive.js';
import { type Charge, gatewayCostView } from '../metering/price-usage.js';
import { takeReadyChunks } from '../providers/sse-chunks.js';
import { walkRoutes } from '../routing/walk-routes.js';
import { brokenStreamError } from './broken-stream-error.js';
import { chargeLinesOf } from './features-of.js';
import type { InferenceBody, StreamingOperation } from './inference-operation.js';
import { type MeteredCall, servedView, walkOptions } from './metered-call.js';
import { nextWithin, type OpenedStream, openStream } from './open-stream.js';
import { failRecord } from './request-log.js';
import { settledHooks, watchChunks } from './run-hooks.js';
import { failCall, recordRoute, recordUsage, settleCall } from './settle-call.js';
import { forwardBatch, StreamDelivery, type StreamEnding, streamUsage } from './stream-delivery.js';

/** Streaming deadline for the whole routing walk (until the first chunk is in hand). */
const STREAM_DEADLINE_MS = 300_000;

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
  const delivery = new StreamDelivery();
  let finished = false;
  let brokenBy: unknown = null;
  const stopAt = watchChunks(call.hooks, call.record);
  const writer = streaming.writer(served, call.body);

  /** Meters and settles once; returns the events that end the stream. */
  const finish = async (how: StreamEnding): Promise<string> => {
    finished = true;
    stopKeepingHold();
    const usage = streamUsage(how, stream.usage(), call.worstCase.usage, delivery.deliveredChars);
    const { finishReason } = delivery;
    const charge: Charge = recordUsage(call, route, {
      usage,
      // The zero-completion waiver is for answers that ended empty, never for an abandoned stream.
      producedOutput: delivery.producedOutput || how === 'cancelled',
      finishReason: how === 'complete' ? finishReason : null,
    });
    if (how === 'broken') {
      failRecord(call.record, brokenStreamError(brokenBy, false), 'broken_stream');
      call.record.httpStatus = 200;
    } else if (how === 'cancelled') {
      failRecord(call.record, new ClientClosedError('The client went away during the stream.'));
    }
    const settled = await settleCall(call, route, delivery.ttftMs);
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
    const stop = stopAt(chunk);
    if (stop) {
      blockedBy = stop;
      return false;
    }
    const { reading, text } = writer.write(chunk);
    delivery.handedOver(reading, () => deps.now() - call.startedAt);
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
        delivery.confirm();
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
          const forwarded = forwardBatch(next.value, takeReady, forward, () => delivery.producedOutput);
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
