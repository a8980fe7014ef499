import type { GatewayConfigInput } from '@tollgate/core';

/**
 * The config under test: the JSON config's shape, as in `tollgate.config.json`. `acme/chat` is
 * served by `primary` first and `backup` second; nothing is sent to these URLs in a test.
 */
export const config: GatewayConfigInput = {
  providers: {
    primary: { format: 'openai', base_url: 'https://primary.example/v1', api_key_env: 'PRIMARY_KEY' },
    backup: { format: 'anthropic', base_url: 'https://backup.example/v1', api_key_env: 'BACKUP_KEY' },
  },
  models: [
    {
      id: 'acme/chat',
      max_output_tokens: 1000,
      endpoints: [
        // USD per million tokens.
        { provider: 'primary', upstream_model: 'chat-1', pricing: { prompt: '2', completion: '8' } },
        { provider: 'backup', upstream_model: 'chat-1-backup', pricing: { prompt: '3', completion: '15' } },
      ],
    },
  ],
  defaults: { rate_limit_rpm: 2 },
};

/** An OpenAI chat completion as `primary` answers it. */
export function openaiAnswer(content: string, usage = { prompt_tokens: 10, completion_tokens: 20 }) {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'chat-1',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
  };
}

/** An Anthropic message as `backup` answers it. */
export function anthropicAnswer(text: string, usage = { input_tokens: 10, output_tokens: 20 }) {
  return {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'chat-1-backup',
    content: [{ type: 'text', text }],
    stop_reason: 'end_turn',
    usage,
  };
}

/** The chat request every example sends. */
export const hello = { model: 'acme/chat', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 100 };
