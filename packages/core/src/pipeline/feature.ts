import type { AuthContext } from '../auth/authenticate.js';
import type { GatewayError } from '../errors/gateway-error.js';
import type { GatewayDeps } from '../gateway-deps.js';
import type { Route } from '../http/route.js';
import type { InferenceBody, InferenceOperation } from '../inference/inference-operation.js';
import type { MeteredCall } from '../inference/metered-call.js';
import type { PlannedCall } from '../inference/prepare-call.js';
import type { MeteredUsage } from '../metering/usage.js';
import type { PlannedRoute } from '../routing/walk-routes.js';
import type { RequestRecord } from '../storage/metering-types.js';
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
  open?(ctx: CallContext): CallHooks | null | Promise<CallHooks | null>;
}

/** What a `resolveBody` hook knows. */
export interface ResolveContext {
  auth: AuthContext;
  deps: GatewayDeps;
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

/** What a hook adds to the worst case the hold covers. */
export interface WorstCaseExtra {
  /** Prompt tokens the call may add (priced on the paid routes). */
  promptTokens: number;
  /** Micro-dollars on top (an extra charge line, held in full). */
  micros: number;
}

/** An answer given before the hold (a cache hit): checked by `checkAnswer` hooks, then sent. */
export interface ShortCircuit {
  answer: Record<string, unknown>;
  respond(): Promise<Response>;
}

/** A line charged on top of the tokens, never waived (the web search's fee). */
export interface ChargeLine {
  id: string;
  micros: number;
  /** Its words on the ledger line; `unanswered` when the model then failed. */
  describe(answered: boolean): string;
}

/** Sees each chunk of a stream before it is forwarded; a `GatewayError` stops the stream there. */
export interface ChunkWatch {
  see(chunk: unknown): GatewayError | null;
}

/** How a call ended, once settled. */
export interface SettledOutcome {
  call: MeteredCall;
  route: PlannedRoute;
  usage: MeteredUsage;
  finishReason: string | null;
  /** The answer as sent (a JSON answer); `null` for a stream (watchers kept what they need). */
  answer: Record<string, unknown> | null;
}

/** One feature's hooks for one call, at the stages they act on (all optional). */
export interface CallHooks {
  /** `plan`, first: the body planned from (a plugin's fields taken out). */
  body?(body: InferenceBody): InferenceBody;
  /** `plan`: providers the call reaches though the deployment has no key for them (its own keys). */
  reachable?(): ReadonlySet<string> | undefined;
  /** `plan`: the planned routes, filtered or reordered. */
  routes?(routes: PlannedRoute[]): PlannedRoute[];
  /** `plan`: what the worst case adds (its tokens and fee). */
  worstCase?(): WorstCaseExtra | null;
  /** `plan`, last: whether answers of this call may come from or go to a cache (default true). */
  cacheable?(): boolean;
  /** `hold`, before it: may refuse (throw) or answer (a short-circuit, nothing held). */
  beforeHold?(planned: PlannedCall<InferenceBody>): Promise<ShortCircuit | null>;
  /** `hold`, after it: may rewrite the call and add charge lines; a refusal settles the call first. */
  afterHold?(call: MeteredCall): Promise<void>;
  /** `answer`: a whole answer (JSON, or a short-circuit) checked before it is sent. */
  checkAnswer?(answer: Record<string, unknown>, record: RequestRecord): GatewayError | null;
  /** `stream`: a watcher of the chunks. */
  watch?(record: RequestRecord): ChunkWatch | null;
  /** `answer`: the response on its way out (headers). */
  answered?(response: Response): void;
  /** `settle`: the settled outcome of a call that succeeded. */
  settled?(outcome: SettledOutcome): Promise<void>;
}
