import { testConfig } from './test-config.js';

/** The offline demo provider only, with one chat model: every call is answered in-process. */
export const demoOnlyConfig = testConfig({
  providers: { demo: { format: 'demo' } },
  models: [
    {
      id: 'demo/chat-small',
      max_output_tokens: 1000,
      endpoints: [
        { provider: 'demo', upstream_model: 'chat-small', pricing: { prompt: '1', completion: '2' } },
      ],
    },
  ],
});
