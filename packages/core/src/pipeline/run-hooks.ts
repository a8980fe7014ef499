import type { Feature, ResolveContext } from './feature.js';

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
