import type { CallContext, Feature, ResolveContext } from './feature.js';

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
