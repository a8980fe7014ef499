import type { ModelType } from '../catalogue/config-schema.js';
import type { GatewayError } from '../errors/gateway-error.js';
import type { WorstCase } from '../metering/estimate-worst-case.js';
import type { ServedView } from '../metering/price-usage.js';
import type { MeteredUsage } from '../metering/usage.js';
import type { TokenUsage } from '../providers/chat-types.js';
import type {
  CallOptions,
  Capability,
  ProviderAdapter,
  UpstreamTarget,
} from '../providers/provider-adapter.js';
import type { PlannedRoute } from '../routing/walk-routes.js';

/** Every inference body names a model; the routing fields (`models`, `provider`) are read from it too. */
export interface InferenceBody {
  model: string;
  [field: string]: unknown;
}

/** What a transform did to the request, for the answer's `gateway.transforms`. */
export interface TransformReport {
  id: string;
  dropped_messages: number;
}

/** What an answer comes to for the meter. */
export interface Metered {
  usage: MeteredUsage;
  /** False only for a chat answer with no text and no tool calls (the `zero_completion` waiver). */
  producedOutput: boolean;
  finishReason: string | null;
}

/**
 * What one inference endpoint adds to the metered pipeline (`run-metered-call.ts`): everything that
 * is its own, and nothing about holds, settles, records or spans. The pipeline runs auth, rpm,
 * labels, route planning, the hold, the walk, the meter and the settle the same way for all.
 */
export interface InferenceOperation<Body extends InferenceBody = InferenceBody, Answer = unknown> {
  /** The record's `endpoint`, e.g. `embeddings`. */
  endpoint: string;
  /** The caller-facing path, for messages (`/v1/embeddings`). */
  path: string;
  /** The GenAI `gen_ai.operation.name` of its span (`chat`, `embeddings`, …). */
  spanOperation: string;
  /** Only models of this type may serve it; another type is `400 invalid_request` naming it. */
  modelType: ModelType;
  /** Only providers whose adapter offers this capability are routed to. */
  capability: Capability;
  /** Whether the caller asked for a stream (only operations with `stream` can). */
  streams?(body: Body): boolean;
  /** Whether a route must call tools (chat's `tools`): models without tool calling are skipped. */
  usesTools?(body: Body): boolean;
  /** Non-text parts by type for the record, and the largest one in bytes for the size cap. */
  attachments?(body: Body): { counts: Record<string, number>; largestBytes: number };
  /**
   * Rewrites the body for the route it is planned for (chat's `middle-out`), before the worst case
   * is taken; `null` when the request asks for no transform.
   */
  transform?(body: Body, route: PlannedRoute): { body: Body; transforms: TransformReport[] } | null;
  /** Whether answers may be kept in the account's response cache (`X-Gateway-Cache`). */
  cacheable?: boolean;
  /** Whether it runs the `web` plugin (`plugins`, the `:online` suffix; chat): web-search/. */
  webPlugin?: boolean;
  /** The most the request may consume on these candidate routes (pure); the pipeline prices it. */
  worstCase(body: Body, routes: readonly PlannedRoute[]): WorstCase;
  /** One attempt on one provider; throws `UpstreamError` when it fails. */
  call(adapter: ProviderAdapter, body: Body, target: UpstreamTarget, options: CallOptions): Promise<Answer>;
  /** What the answer consumed; `worstCase` stands in for counts the provider did not report. */
  meter(answer: Answer, body: Body, worstCase: WorstCase): Metered;
  /** The caller's JSON body, without the `gateway` object (the pipeline adds it). */
  respond(answer: Answer, body: Body, served: ServedView, metered: Metered): Record<string, unknown>;
  /**
   * A response-cache hit's answer as this request's own (fresh ids, this request's echoed fields),
   * before it is sent as JSON or replayed as a stream; without it the kept answer is sent as it is.
   */
  recall?(answer: Record<string, unknown>, served: ServedView): Record<string, unknown>;
  /** Honour `Idempotency-Key` (non-streaming requests only). */
  idempotent: boolean;
  /** How to stream, for operations that can. */
  stream?: StreamingOperation<Body, unknown>;
}

/** An open upstream stream of an operation's chunks. */
export interface OpenedUpstream<Chunk> {
  chunks: AsyncIterable<Chunk>;
  /** Token counts the provider reported, once known. */
  usage(): TokenUsage | null;
}

/** What one chunk carries for the meter. */
export interface ChunkReading {
  /** Characters of generated output in it. */
  chars: number;
  /** Whether it carried output (text or a tool call). */
  produced: boolean;
  finishReason: string | null;
}

/** How a stream ended, for the events that close it. */
export interface StreamEnd {
  /** The finish reason of a complete stream; `null` for a broken one. */
  finishReason: string | null;
  usage: MeteredUsage;
  /** The `gateway` object (`{request_id, cost_micros: 0, error: 'settle_failed'}` when the settle failed). */
  gateway: Record<string, unknown>;
  /** Set when the stream broke after its first byte: the error the caller is told. */
  error: GatewayError | null;
  /** When the request started (epoch ms). */
  createdAt: number;
}

/**
 * One stream's wire, as the caller speaks it: how each upstream chunk is metered and framed as
 * server-sent events, and which events end the stream. An operation makes a new writer for each
 * stream, so a writer may keep state (item ids, sequence numbers, the last chunk).
 */
export interface StreamWriter<Chunk> {
  /** Meters one chunk and frames it: the SSE text to forward (`''` when it sends nothing yet). */
  write(chunk: Chunk): { reading: ChunkReading; text: string };
  /** The SSE text that ends the stream: the terminal usage and cost, and on a break the error first. */
  end(end: StreamEnd): string;
}

/** The streaming half of an operation: how to open its upstream stream and write the caller's events. */
export interface StreamingOperation<Body extends InferenceBody, Chunk> {
  open(
    adapter: ProviderAdapter,
    body: Body,
    target: UpstreamTarget,
    options: CallOptions,
  ): Promise<OpenedUpstream<Chunk>>;
  /** A writer for one stream, served as `served` says (its model id, request id). */
  writer(served: ServedView, body: Body): StreamWriter<Chunk>;
  /** A cached answer (the operation's `respond` body) as the chunks a stream of it would have sent. */
  replay?(answer: Record<string, unknown>): Chunk[];
  /** The chunks of a whole stream as the answer `respond` would have given, for the response cache. */
  assemble?(chunks: readonly Chunk[], servedModel: string, usage: MeteredUsage): Record<string, unknown>;
}
