import type { GatewayError } from '../errors/gateway-error.js';
import type { RequestRecord } from '../storage/metering-types.js';
import type { CallHooks, ChunkWatch, PlannedCall, SettledOutcome, ShortCircuit } from './call.js';
import type { CallContext, Feature, ResolveContext } from './feature.js';
import type { InferenceBody } from './inference-operation.js';

/** Stage `resolve`: the raw body through every feature's `resolveBody`, in registration order. */
export async function resolveBody(
  features: readonly Feature[],
  raw: unknown,
  ctx: ResolveContext,
): Promise<unknown> {
  let body = raw;
  for (const feature of features) if (feature.resolveBody) body = await feature.resolveBody(body, ctx);
  return body;
}

/** Stage `record`: `run` wrapped by every feature's `around`, the first registered outermost. */
export function aroundCall(
  features: readonly Feature[],
  ctx: CallContext,
  run: () => Promise<Response>,
): Promise<Response> {
  let next = run;
  for (let i = features.length - 1; i >= 0; i--) {
    const around = features[i]!.around;
    if (!around) continue;
    const inner = next;
    next = () => around(ctx, inner);
  }
  return next();
}

/**
 * The features' hooks for one call (those that have something to do for it). Synchronous, and the
 * stages below await only the hooks that exist: a call no feature acts on pays no turn for them.
 */
export function openHooks(features: readonly Feature[], ctx: CallContext): CallHooks[] {
  const hooks: CallHooks[] = [];
  for (const feature of features) {
    const opened = feature.open?.(ctx);
    if (opened) hooks.push(opened);
  }
  return hooks;
}

/** Stage `hold`, before it: each hook may refuse (throws); the first short-circuit answers. */
export async function beforeHold(
  hooks: readonly CallHooks[],
  planned: PlannedCall<InferenceBody>,
): Promise<ShortCircuit | null> {
  for (const hook of hooks) {
    if (!hook.beforeHold) continue;
    const short = await hook.beforeHold(planned);
    if (short) return short;
  }
  return null;
}

/** Stage `answer`: the first hook's objection to a whole answer (the verdict on the record), else `null`. */
export function checkAnswer(
  hooks: readonly CallHooks[],
  answer: Record<string, unknown>,
  record: RequestRecord,
  kind: 'answer' | 'short-circuit',
): GatewayError | null {
  for (const hook of hooks) {
    const blocked = hook.checkAnswer?.(answer, record, kind);
    if (blocked) return blocked;
  }
  return null;
}

/**
 * Stage `stream`: the hooks' watchers of one stream, as one check. Each sees a chunk before it is
 * forwarded; the first objection (an output guardrail) stops the stream before that chunk.
 */
export function watchChunks(
  hooks: readonly CallHooks[],
  record: RequestRecord,
): (chunk: unknown) => GatewayError | null {
  const watchers: ChunkWatch[] = [];
  for (const hook of hooks) {
    const watcher = hook.watch?.(record);
    if (watcher) watchers.push(watcher);
  }
  return (chunk) => {
    for (const watcher of watchers) {
      const stop = watcher.see(chunk);
      if (stop) return stop;
    }
    return null;
  };
}

/** Stage `settle`: every hook sees the settled outcome of a call that succeeded. */
export async function settledHooks(outcome: SettledOutcome): Promise<void> {
  for (const hook of outcome.call.hooks) if (hook.settled) await hook.settled(outcome);
}
