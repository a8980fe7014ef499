export { createOpenAIProvider } from './openai-provider.js';
