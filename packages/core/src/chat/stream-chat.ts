import { keepHoldAlive } from '../billing/keep-hold-alive.js';
import { gatewayCostView } from '../billing/price-usage.js';
import { errorEnvelope, GatewayError } from '../errors/gateway-error.js';
import type { ChatCompletionChunk, TokenUsage } from '../providers/chat-types.js';
import type { CompletionStream } from '../providers/provider-adapter.js';
import { UpstreamError } from '../providers/upstream-error.js';
import { failRecord } from '../records/request-log.js';
import {
  type AttemptControl,
  type PlannedRoute,
  type WalkClock,
  walkRoutes,
} from '../routing/walk-routes.js';
import { type ChatCall, chatUsage, estimatedUsage, outputCharacters, upstreamTarget } from './chat-call.js';
import { failChat, recordRoute, recordUsage, settleChat } from './finish-chat.js';

/** Streaming deadline for the whole routing walk (until the first chunk is in hand). */
export const STREAM_DEADLINE_MS = 300_000;

interface OpenedStream {
  stream: CompletionStream;
  iterator: AsyncIterator<ChatCompletionChunk>;
  first: IteratorResult<ChatCompletionChunk>;
  /** Aborts the upstream call after the walk is over (client gone). */
  upstream: AbortController;
}

const encoder = new TextEncoder();
const sse = (data: string, event?: string) =>
  encoder.encode(`${event ? `event: ${event}\n` : ''}data: ${data}\n\n`);

/**
 * A streaming chat completion (spec "Streaming response"). The routing walk lasts until a route
 * yields its first chunk, so a route that fails before any byte reaches the client is still
 * retried or failed over. Then chunks are forwarded as they arrive (one per pull, nothing
 * buffered), followed by a terminal chunk with usage and cost, then `data: [DONE]`. A break after
 * the first byte: `event: error` with the envelope, the terminal chunk without `finish_reason`,
 * `[DONE]`. The charge is settled exactly once, on whichever of end, break or cancel comes first.
 */
export async function streamChat(call: ChatCall): Promise<Response> {
  const { deps } = call;
  let opened: Awaited<ReturnType<typeof walkRoutes<OpenedStream>>>;
  try {
    opened = await walkRoutes(call.plan.routes, (route, control) => openStream(call, route, control), {
      attemptsPerRoute: deps.attemptsPerRoute,
      deadlineAt: call.startedAt + STREAM_DEADLINE_MS,
      signal: call.signal,
      clock: deps.clock,
      onAttemptFailed: deps.observers.attemptFailed(call.requestId),
    });
  } catch (error) {
    return failChat(call, error);
  }
  const { route } = opened;
  recordRoute(call, route, opened);
  const { stream, iterator, upstream } = opened.value;
  const idleTimeoutMs = route.endpoint.provider.streamIdleTimeoutMs;
  const stopKeepingHold = keepHoldAlive(deps, call.reservation.id, deps.reservationTtlMs);
  let pending: IteratorResult<ChatCompletionChunk> | null = opened.value.first;

  // Output counts as delivered once the consumer comes back for what follows it (for the Node
  // server: once its bytes were written to the connection). The chunk handed over last is `unconfirmed`
  // until then: a client gone before taking it never received it.
  let deliveredChars = 0;
  let unconfirmedChars = 0;
  let producedOutput = false;
  let finishReason: string | null = null;
  let ttftMs: number | null = null;
  let lastChunk: ChatCompletionChunk | null = null;
  let finished = false;

  /** Settles once; returns the terminal chunk to send (null when the client is gone). */
  let brokenBy: unknown = null;
  const finish = async (how: 'complete' | 'broken' | 'cancelled'): Promise<ChatCompletionChunk> => {
    finished = true;
    stopKeepingHold();
    const reported = stream.usage();
    // "Never read" (Cost rule 8): the client went away before any content chunk was delivered (see
    // `deliveredChars`); charged at the ceiling it was reserved against.
    const nothingRead = how === 'cancelled' && deliveredChars === 0;
    const usage: TokenUsage =
      how === 'complete' && reported
        ? reported
        : nothingRead
          ? { ...estimatedUsage(call, reported, 0), completionTokens: call.worstCase.completionTokens }
          : estimatedUsage(call, reported, deliveredChars);
    // A stream nobody read is charged at its ceiling; otherwise what was produced is billed.
    const charge = recordUsage(
      call,
      route,
      usage,
      // The zero-completion waiver is for answers that ended empty, never for an abandoned stream.
      producedOutput || how === 'cancelled',
      how === 'complete' ? finishReason : null,
    );
    if (how === 'broken') {
      failRecord(call.record, brokenStreamError(brokenBy, false), 'broken_stream');
      call.record.httpStatus = 200;
    } else if (how === 'cancelled') {
      call.record.status = 'client_closed';
      call.record.httpStatus = 499;
    }
    const settled = await settleChat(call, route, ttftMs);
    return terminalChunk(
      call,
      route,
      lastChunk,
      how === 'complete' ? finishReason : null,
      usage,
      settled ? charge : null,
    );
  };

  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (finished) return;
        // The consumer came back: what it took last was delivered.
        deliveredChars += unconfirmedChars;
        unconfirmedChars = 0;
        let next: IteratorResult<ChatCompletionChunk>;
        try {
          next = pending ?? (await nextWithin(iterator, idleTimeoutMs, deps.clock));
          pending = null;
        } catch (error) {
          if (finished) return;
          upstream.abort();
          brokenBy = error;
          const terminal = await finish('broken');
          const envelope = errorEnvelope(brokenStreamError(error, true), call.requestId);
          controller.enqueue(sse(JSON.stringify(envelope), 'error'));
          controller.enqueue(sse(JSON.stringify(terminal)));
          controller.enqueue(sse('[DONE]'));
          controller.close();
          return;
        }
        if (finished) return;
        if (next.done) {
          const terminal = await finish('complete');
          controller.enqueue(sse(JSON.stringify(terminal)));
          controller.enqueue(sse('[DONE]'));
          controller.close();
          return;
        }
        const chunk = next.value;
        chunk.model = route.model.id;
        lastChunk = chunk;
        for (const choice of chunk.choices) {
          const chars = outputCharacters(choice.delta ?? {});
          unconfirmedChars += chars;
          if (chars > 0 || (choice.delta?.tool_calls?.length ?? 0) > 0) producedOutput = true;
          if (choice.finish_reason) finishReason = choice.finish_reason;
        }
        ttftMs ??= deps.now() - call.startedAt;
        controller.enqueue(sse(JSON.stringify(chunk)));
      },
      async cancel() {
        if (finished) return;
        upstream.abort();
        await finish('cancelled');
      },
    },
    { highWaterMark: 0 },
  );

  return new Response(body, {
    status: 200,
    headers: {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache',
      Connection: 'keep-alive',
    },
  });
}

/** One attempt: open the upstream stream and read its first chunk (a failure here can still fail over). */
async function openStream(
  call: ChatCall,
  route: PlannedRoute,
  control: AttemptControl,
): Promise<OpenedStream> {
  const { signal } = control;
  const upstream = new AbortController();
  const forward = () => upstream.abort(signal.reason);
  signal.addEventListener('abort', forward, { once: true });
  try {
    const stream = await call.deps
      .providers(route.endpoint.provider)
      .stream(call.body, upstreamTarget(route), {
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

function terminalChunk(
  call: ChatCall,
  route: PlannedRoute,
  last: ChatCompletionChunk | null,
  finishReason: string | null,
  usage: TokenUsage,
  charge: ReturnType<typeof recordUsage> | null,
) {
  return {
    id: last?.id ?? call.requestId,
    object: 'chat.completion.chunk' as const,
    created: last?.created ?? Math.floor(call.startedAt / 1000),
    model: route.model.id,
    choices: [{ index: 0, delta: {}, finish_reason: finishReason }],
    usage: chatUsage(usage),
    gateway: charge
      ? gatewayCostView(charge, {
          requestId: call.requestId,
          model: route.model.id,
          provider: route.endpoint.provider.id,
          attempts: call.record.attempts,
          requestedModel: call.plan.requested.id,
        })
      : { request_id: call.requestId, cost_micros: 0, cost_usd: 0, error: 'settle_failed' },
  };
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
 * The error of a stream that broke after it started: `upstream_timeout` when the provider went
 * silent, else `upstream_error`. The caller's message may say why; the record keeps a fixed one.
 */
function brokenStreamError(cause: unknown, forCaller: boolean): GatewayError {
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
  return new GatewayError(code, `The provider stream ${timedOut ? 'stalled' : 'broke'}: ${why}`);
}
