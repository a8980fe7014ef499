export { buildOpenAIRequest } from './build-openai-request.js';
export { convertOpenAIStream } from './convert-openai-stream.js';
export { convertOpenAIUsage } from './convert-openai-usage.js';
export { createOpenAIProvider, type OpenAIProviderOptions } from './openai-provider.js';
export {
  type OpenAIUsage,
  openAIChunkSchema,
  openAICompletionSchema,
  openAIErrorEnvelopeSchema,
  openAIUsageSchema,
} from './openai-wire-schemas.js';
export { readOpenAIErrorMessage } from './read-openai-error.js';
