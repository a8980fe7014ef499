export { createAnthropicProvider } from './anthropic-provider.js';
