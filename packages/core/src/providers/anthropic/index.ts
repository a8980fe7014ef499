export {
  ANTHROPIC_VERSION,
  type AnthropicProviderOptions,
  anthropicHeaders,
  createAnthropicProvider,
} from './anthropic-provider.js';
export type { AnthropicRequest } from './anthropic-request-schema.js';
export type { AnthropicMessage, AnthropicStreamEvent, AnthropicUsage } from './anthropic-wire-schemas.js';
export { convertAnthropicStream } from './convert-anthropic-stream.js';
export { convertFromAnthropicResponse } from './convert-from-anthropic-response.js';
export { convertToAnthropicMessages } from './convert-to-anthropic-messages.js';
export { convertToAnthropicRequest } from './convert-to-anthropic-request.js';
export { mapAnthropicStopReason, type OpenAIFinishReason } from './map-anthropic-stop-reason.js';
export { toChatUsage, toTokenUsage } from './map-anthropic-usage.js';
