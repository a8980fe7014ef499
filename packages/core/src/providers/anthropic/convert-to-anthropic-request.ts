import type { ChatRequest, ChatTool, ChatToolChoice } from '../chat-types.js';
import type { UpstreamTarget } from '../provider-adapter.js';
import { UpstreamError } from '../upstream-error.js';
import type { AnthropicRequest, AnthropicTool, AnthropicToolChoice } from './anthropic-request-schema.js';
import { convertToAnthropicMessages } from './convert-to-anthropic-messages.js';

/**
 * An OpenAI chat-completions request → an Anthropic Messages body for `target`.
 *
 * Only the fields below are translated; every other field is dropped, because Anthropic answers
 * 400 to a field it does not know. That drops the gateway's own fields (`GATEWAY_FIELDS`, so no
 * `metadata` goes upstream) and OpenAI-only ones such as `user`, `n`, `seed`, `response_format`,
 * `stream_options`, `logprobs` and `frequency_penalty`. Values are sent as given (no clamping of
 * `temperature` to Anthropic's 0..1): an out-of-range value gets Anthropic's own 400.
 */
export function convertToAnthropicRequest(request: ChatRequest, target: UpstreamTarget): AnthropicRequest {
  const { system, messages } = convertToAnthropicMessages(request.messages);
  const body: AnthropicRequest = {
    model: target.upstreamModel,
    max_tokens: maxTokens(request, target),
    messages,
  };
  if (system !== undefined) body.system = system;
  if (request.stream === true) body.stream = true;
  if (typeof request.temperature === 'number') body.temperature = request.temperature;
  if (typeof request.top_p === 'number') body.top_p = request.top_p;
  // Not an OpenAI field, but OpenRouter-style callers send it and Anthropic knows it.
  if (typeof request.top_k === 'number') body.top_k = request.top_k;
  const stop = stopSequences(request.stop);
  if (stop) body.stop_sequences = stop;

  const tools = (request.tools ?? []).map(convertTool);
  // A tool_choice without tools is meaningless, and Anthropic refuses one; only send it with tools.
  if (tools.length > 0) {
    body.tools = tools;
    const toolChoice = convertToolChoice(request.tool_choice, request.parallel_tool_calls === false);
    if (toolChoice) body.tool_choice = toolChoice;
  }
  return body;
}

/** Anthropic requires `max_tokens`: the caller's, else the model's whole output ceiling. */
function maxTokens(request: ChatRequest, target: UpstreamTarget): number {
  if (typeof request.max_tokens === 'number') return request.max_tokens;
  if (typeof request.max_completion_tokens === 'number') return request.max_completion_tokens;
  return target.maxOutputTokens;
}

function stopSequences(stop: unknown): string[] | undefined {
  if (typeof stop === 'string') return stop === '' ? undefined : [stop];
  if (Array.isArray(stop)) {
    const sequences = stop.filter((s): s is string => typeof s === 'string' && s !== '');
    return sequences.length > 0 ? sequences : undefined;
  }
  return undefined;
}

function convertTool(tool: ChatTool): AnthropicTool {
  if (tool.type !== 'function') {
    throw new UpstreamError('http', `anthropic: tool type "${String(tool.type)}" is not supported`, 400);
  }
  const converted: AnthropicTool = {
    name: tool.function.name,
    input_schema: tool.function.parameters ?? { type: 'object', properties: {} },
  };
  if (tool.function.description !== undefined) converted.description = tool.function.description;
  return converted;
}

/**
 * `none` is sent as `{type:'none'}` rather than omitted: with tools present, omitting it would let
 * the model call them. `parallel_tool_calls: false` rides on the choice; `none` cannot carry it.
 */
function convertToolChoice(
  choice: ChatToolChoice | undefined,
  disableParallel: boolean,
): AnthropicToolChoice | undefined {
  const parallel = disableParallel ? { disable_parallel_tool_use: true } : {};
  if (choice === undefined || choice === null)
    return disableParallel ? { type: 'auto', ...parallel } : undefined;
  if (typeof choice === 'object') {
    if (choice.type === 'function' && typeof choice.function?.name === 'string') {
      return { type: 'tool', name: choice.function.name, ...parallel };
    }
    throw new UpstreamError('http', 'anthropic: tool_choice object must name a function', 400);
  }
  switch (choice) {
    case 'none':
      return { type: 'none' };
    case 'auto':
      return { type: 'auto', ...parallel };
    case 'required':
      return { type: 'any', ...parallel };
    default: {
      const unknownChoice: never = choice;
      throw new UpstreamError(
        'http',
        `anthropic: tool_choice "${String(unknownChoice)}" is not supported`,
        400,
      );
    }
  }
}
