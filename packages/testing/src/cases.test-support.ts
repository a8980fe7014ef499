import type { GatewayConfigInput } from '@tollgate/core';

/*
 * The kit's own runner-neutral cases (a failover, a price, a cap), shared by its vitest and
 * node:test files so both runners are shown the same behaviour.
 */

export const casesConfig: GatewayConfigInput = {
  providers: {
    first: { format: 'anthropic', base_url: 'https://first.example/v1', api_key: 'k1' },
    second: { format: 'openai', base_url: 'https://second.example/v1', api_key: 'k2' },
  },
  models: [
    {
      id: 'kit/chat',
      max_output_tokens: 200,
      endpoints: [
        { provider: 'first', upstream_model: 'claude-x', pricing: { prompt: '3', completion: '15' } },
        { provider: 'second', upstream_model: 'gpt-x', pricing: { prompt: '1', completion: '4' } },
      ],
    },
  ],
};

export const ask = { model: 'kit/chat', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 100 };

export const secondAnswer = {
  id: 'chatcmpl-k',
  object: 'chat.completion',
  created: 1,
  model: 'gpt-x',
  choices: [{ index: 0, message: { role: 'assistant', content: 'from second' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 100, completion_tokens: 50, total_tokens: 150 },
};

export const firstAnswer = {
  id: 'msg_k',
  type: 'message',
  role: 'assistant',
  model: 'claude-x',
  content: [{ type: 'text', text: 'from first' }],
  stop_reason: 'end_turn',
  usage: { input_tokens: 100, output_tokens: 50 },
};
