import type { CutCall } from '../admin/system/drain.js';
import type { AuthContext } from '../auth/authenticate.js';
import type { GatewayError } from '../errors/gateway-error.js';
import type { GatewayDeps } from '../gateway-deps.js';
import type { WorstCase } from '../metering/estimate-worst-case.js';
import type { MeteredUsage } from '../metering/usage.js';
import type { DeferredRateLimit } from '../protections/rate-limit.js';
import type { RoutePlan } from '../routing/plan-routes.js';
import type { PlannedRoute } from '../routing/walk-routes.js';
import type { CreditReservation, RequestRecord } from '../storage/metering-types.js';
import type { EpochMs } from '../storage/types.js';
import type { InferenceBody, InferenceOperation, TransformReport } from './inference-operation.js';

/*
 * The metered call as it moves through its stages (`stages.ts`), and the hooks a feature may run at
 * them: the types only, shared by the pipeline's modules and the features.
 */

export interface CallInput<Body extends InferenceBody> {
  request: Request;
  requestId: string;
  body: Body;
  auth: AuthContext;
  deps: GatewayDeps;
  startedAt: number;
  /** The request's rate-limit hit when it is still to count (the hold counts it); absent for a batch item. */
  rateLimit?: DeferredRateLimit;
}

/** A request planned but not yet held: what the hold and the walk will use. */
export interface PlannedCall<Body extends InferenceBody> {
  /** The body as it goes upstream (after transforms). */
  body: Body;
  plan: RoutePlan;
  worstCase: WorstCase;
  transforms: TransformReport[] | null;
  /** Whether answers of this call may come from or go to a cache (no hook said otherwise). */
  cacheable: boolean;
}

/** Everything one metered request carries from its hold to its settle. */
export interface MeteredCall<Body extends InferenceBody = InferenceBody> {
  op: InferenceOperation<Body>;
  requestId: string;
  body: Body;
  auth: AuthContext;
  deps: GatewayDeps;
  /** The request record being filled in; written with the hold, completed once by the settle. */
  record: RequestRecord;
  plan: RoutePlan;
  reservation: CreditReservation;
  worstCase: WorstCase;
  /** What transforms did to the body, for `gateway.transforms`; `null` when none was asked for. */
  transforms: TransformReport[] | null;
  /**
   * Aborts when the client goes away (its reason then the caller's) or when a drain cuts the call
   * (a `GatewayError`, `shutting_down`); see `abandonedBecause`.
   */
  signal: AbortSignal;
  startedAt: EpochMs;
  /** Set by the one settle; a second settle is a no-op that returns the first one's outcome. */
  settled: Promise<boolean> | null;
  /** Set when the settle failed: the error the request answers with (`500`, or `503 storage_unavailable`). */
  settleFailure?: GatewayError;
  /** What the request consumed, once metered (for the ledger line). */
  usage: MeteredUsage | null;
  /** Lines charged on top of the tokens (a plugin that ran: the search fee), also on failure. */
  charges: ChargeLine[];
  /** Ends the call early for a drain: aborts `signal`; a stream replaces it with its own break. */
  cut: CutCall;
  /** Tells the drain the call is over; called once its settle landed. */
  leaveDrain: () => void;
  /** The features' hooks for this call, in registration order. */
  hooks: readonly CallHooks[];
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
  reachable?(): Promise<ReadonlySet<string> | undefined>;
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
  /**
   * `answer`: a whole answer checked before it is sent — the call's JSON answer (refused after its
   * settle, charged) or a short-circuit's (refused, uncharged); the objection, else `null`.
   */
  checkAnswer?(
    answer: Record<string, unknown>,
    record: RequestRecord,
    kind: 'answer' | 'short-circuit',
  ): GatewayError | null;
  /** `stream`: a watcher of the chunks. */
  watch?(record: RequestRecord): ChunkWatch | null;
  /** `answer`: the response on its way out (headers). */
  answered?(response: Response): void;
  /** `settle`: the settled outcome of a call that succeeded. */
  settled?(outcome: SettledOutcome): Promise<void>;
}
