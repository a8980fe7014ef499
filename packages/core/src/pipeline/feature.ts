import type { AuthContext } from '../auth/authenticate.js';
import type { GatewayError } from '../errors/gateway-error.js';
import type { GatewayDeps } from '../gateway-deps.js';
import type { ResolveScope, Route } from '../http/route.js';
import type { RequestRecord } from '../storage/metering-types.js';
import type { CallHooks } from './call.js';
import type { InferenceBody, InferenceOperation } from './inference-operation.js';
import type { PlaceSystem } from './place-system.js';

/**
 * An account feature (presets, idempotency, BYOK, the response cache, guardrails, web search): its
 * routes, and its hooks at the named stages of the metered call (`STAGES`). The pipeline runs the
 * hooks of every registered feature (`gateway.ts`, `deps.features`) and never names one.
 */
export interface Feature {
  readonly name: string;
  /** The feature's own API routes (`/v1/presets`, …), added to the route table. */
  readonly routes?: readonly Route[];
  /** Extra charge lines it may add (`web_search`): shown, 0 when not charged, in `cost_breakdown`. */
  readonly chargeLines?: readonly string[];
  /** Stage `resolve`: the raw JSON body of an inference request, rewritten before it is validated. */
  resolveBody?(raw: unknown, ctx: ResolveContext): Promise<unknown>;
  /** Stage `record`: wraps the whole call; may answer without running it (an idempotent replay). */
  around?(ctx: CallContext, run: () => Promise<Response>): Promise<Response>;
  /** Opens the feature's hooks for one call (`null`: nothing to do for this one). */
  open?(ctx: CallContext): CallHooks | null;
}

/** What a `resolveBody` hook knows. */
export interface ResolveContext extends ResolveScope {
  /** Where a `system` prompt goes in this wire's body. */
  placeSystem: PlaceSystem;
}

/** One metered call as the features see it before anything is held. */
export interface CallContext {
  op: InferenceOperation<InferenceBody>;
  request: Request;
  requestId: string;
  body: InferenceBody;
  auth: AuthContext;
  deps: GatewayDeps;
  record: RequestRecord;
  /** Whether the answer is streamed. */
  streams: boolean;
  /** Counts the request's rate-limit hit now, when still to count (refusing with a `429` if over). */
  countRateLimit(): Promise<void>;
  /** Records a refusal before the hold (never charged). */
  recordRefusal(error: GatewayError): Promise<void>;
  /** Records an answer given without running the call (nothing charged). */
  recordReplay(): Promise<void>;
}
