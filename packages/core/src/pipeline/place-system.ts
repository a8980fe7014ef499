/**
 * Where a `system` prompt given apart from the body (a preset's) goes in a merged body, by the
 * wire's shape: set on `merged` (a copy the caller owns). Chat's default puts it first as a system
 * message; a wire skin names its own place (`InferenceRouteDoc.placeSystem`).
 */
export type PlaceSystem = (merged: Record<string, unknown>, system: string) => void;

/** Chat's place for a `system` prompt: a system message first, before the request's own (only for a body with `messages`). */
export const systemMessageFirst: PlaceSystem = (merged, system) => {
  if (Array.isArray(merged.messages))
    merged.messages = [{ role: 'system', content: system }, ...merged.messages];
};
