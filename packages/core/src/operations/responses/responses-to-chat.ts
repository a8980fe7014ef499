import { GatewayError } from '../../errors/gateway-error.js';
import type { ChatRequest } from '../../providers/chat-types.js';
import { convertInput } from './convert-input-items.js';
import { convertTools, type ToolOptions } from './convert-responses-tools.js';
import type { ResponsesRequest, ResponsesTool } from './responses-types.js';

/** A Responses request as the chat request the metered pipeline runs on, and what it lost. */
export interface Translation {
  body: ChatRequest;
  /** Names of the chat function tools that stand for `custom` tools. */
  custom: ReadonlySet<string>;
  /** Types of the hosted tools removed, for `X-Gateway-Dropped-Tools`. */
  dropped: string[];
  /** The tools the Response echoes. */
  tools: ResponsesTool[];
  /**
   * False when something of the request has no chat form (an item left out, a hosted tool, a
   * Responses-only field): the chat request's cache key would not tell it apart.
   */
  lossless: boolean;
}

/** Sampling and identity fields with the same name and meaning on both wires. */
const SAME_FIELDS = [
  'temperature',
  'top_p',
  'presence_penalty',
  'frequency_penalty',
  'parallel_tool_calls',
  'user',
  'safety_identifier',
  'prompt_cache_key',
  'service_tier',
] as const;

/** The gateway's own fields (routing, plugins, presets, the cache opt-in): they ride along as they are. */
const GATEWAY_OWN = ['models', 'provider', 'plugins', 'preset', 'transforms', 'cache'] as const;

/**
 * Every field whose meaning the chat request carries (or that changes nothing upstream). Another
 * field (`include`, `truncation`, `prompt`, …) may change a native route's answer, so a request
 * with one is not lossless.
 */
const TRANSLATED = new Set<string>([
  ...SAME_FIELDS,
  ...GATEWAY_OWN,
  'model',
  'input',
  'instructions',
  'tools',
  'tool_choice',
  'max_output_tokens',
  'text',
  'reasoning',
  'metadata',
  'stream',
  'stream_options',
  'store',
  'background',
  'previous_response_id',
  'conversation',
]);

/**
 * `previous_response_id`, `conversation` or `background: true`: each needs state kept between
 * requests, which the gateway never keeps (product.md "Stateless"): `400 invalid_request`.
 */
export function refuseStatefulFields(wire: ResponsesRequest): void {
  const refusal =
    wire.previous_response_id != null
      ? ['previous_response_id', 'send the whole conversation in input instead']
      : wire.conversation != null
        ? ['conversation', 'send the whole conversation in input instead']
        : wire.background === true
          ? ['background', 'stream the answer instead (nothing could fetch it later)']
          : null;
  if (refusal === null) return;
  const [field, instead] = refusal;
  throw new GatewayError(
    'invalid_request',
    `Invalid request body. body.${field}: this gateway is stateless and keeps no responses or conversations; ${instead}.`,
  );
}

/**
 * The chat request a Responses request becomes (product.md "Request"): the conversation from
 * `instructions` and `input`, the tools and `tool_choice`, `max_output_tokens` as `max_tokens` (so
 * the hold covers it as chat's), `text.format` as `response_format`, `reasoning.effort` as
 * `reasoning_effort`, `metadata` as the gateway's labels, the sampling fields and the gateway's own
 * fields as they are; a `web_search` tool as the `web` plugin. Everything else of the Responses
 * wire (`store`, `include`, `truncation`, …) has no chat form and is left out.
 */
export function responsesToChat(wire: ResponsesRequest, options: ToolOptions): Translation {
  const input = convertInput(wire.input, wire.instructions);
  const plan = convertTools(wire.tools, wire.tool_choice, options);
  const body: ChatRequest = { model: wire.model, messages: input.messages };
  if (wire.stream === true) body.stream = true;
  if (plan.tools.length > 0) body.tools = plan.tools;
  if (plan.toolChoice !== undefined) body.tool_choice = plan.toolChoice;
  if (typeof wire.max_output_tokens === 'number') body.max_tokens = wire.max_output_tokens;
  for (const field of SAME_FIELDS) if (wire[field] != null) body[field] = wire[field];
  const format = responseFormat(wire.text?.format);
  if (format) body.response_format = format;
  if (typeof wire.reasoning?.effort === 'string') body.reasoning_effort = wire.reasoning.effort;
  if (wire.metadata != null) body.metadata = wire.metadata;
  for (const field of GATEWAY_OWN) if (wire[field] !== undefined) body[field] = wire[field];
  if (plan.webPlugin) body.plugins = withWebPlugin(body.plugins);
  return {
    body,
    custom: plan.custom,
    dropped: plan.dropped,
    tools: plan.echo,
    lossless: input.lossless && !plan.hosted && saysEverything(wire),
  };
}

/** Whether the chat request says all the Responses request asks (no field without a chat form). */
function saysEverything(wire: ResponsesRequest): boolean {
  for (const [field, value] of Object.entries(wire)) {
    if (value != null && !TRANSLATED.has(field)) return false;
  }
  const { format: _format, ...text } = wire.text ?? {};
  const { effort: _effort, ...reasoning } = wire.reasoning ?? {};
  return Object.keys(text).length === 0 && Object.keys(reasoning).length === 0;
}

/** `text.format` as chat's `response_format`: `json_schema` moves its fields under `json_schema`. */
function responseFormat(format: Record<string, unknown> | undefined): Record<string, unknown> | null {
  if (!format || typeof format !== 'object') return null;
  if (format.type === 'json_object') return { type: 'json_object' };
  if (format.type !== 'json_schema') return null;
  const { type: _type, ...schema } = format;
  return { type: 'json_schema', json_schema: schema };
}

/** The request's `plugins` with the `web` plugin, unless it already asks for it. */
function withWebPlugin(plugins: unknown): unknown[] {
  const list = Array.isArray(plugins) ? plugins : [];
  const asked = list.some((p) => p && typeof p === 'object' && (p as { id?: unknown }).id === 'web');
  return asked ? list : [...list, { id: 'web' }];
}
