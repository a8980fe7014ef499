import type { GatewayDeps } from '../gateway-deps.js';
import type { Feature } from './feature.js';

/*
 * The features a gateway registered, by its deps. Kept here rather than as a field of `GatewayDeps`:
 * the hooks' contexts carry those deps, so the one type naming the other both ways would be an
 * import cycle.
 */
const registered = new WeakMap<
  GatewayDeps,
  { features: readonly Feature[]; chargeLines: readonly string[] }
>();

/** Registers the gateway's features (`createGateway`, once). */
export function useFeatures(deps: GatewayDeps, features: readonly Feature[]): void {
  // The charge lines are gathered once here: every answer's `cost_breakdown` names them.
  registered.set(deps, { features, chargeLines: features.flatMap((feature) => feature.chargeLines ?? []) });
}

/** The features whose hooks run for requests served with `deps`, in registration order. */
export function featuresOf(deps: GatewayDeps): readonly Feature[] {
  return registered.get(deps)?.features ?? [];
}

/** The extra charge lines the features of `deps` may add (shown in every `cost_breakdown`). */
export function chargeLinesOf(deps: GatewayDeps): readonly string[] {
  return registered.get(deps)?.chargeLines ?? [];
}
