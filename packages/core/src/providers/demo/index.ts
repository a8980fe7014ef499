export { createDemoHttpClient } from './demo-http-client.js';
export { createDemoProvider, type DemoProviderOptions } from './demo-provider.js';
export {
  DEMO_WORDS_PER_CHUNK,
  type DemoAnswer,
  demoAnswer,
  demoChunks,
  demoCompletion,
} from './demo-reply.js';
