import type { Json } from './inference-wire.js';
import { testConfig } from './test-config.js';
import { readFixture } from './wire-fixtures.js';

export {
  parseEvents,
  readResponsesStream,
} from '../../packages/core/src/operations/responses/responses-events.test-support.js';

/*
 * The catalogue and upstream answers the Responses endpoint is tested with in-process.
 */

/**
 * - `p1`: OpenAI format, chat only (translated), takes `max_completion_tokens`;
 * - `p2`: OpenAI format serving `/responses` itself (`responses: true`, native);
 * - `an`: Anthropic (translated);
 * - `exa`: a web-search backend;
 * - `acme/chat` on p1 (1 / 2 USD per M, cached prompt 0.25, 100 output tokens at most);
 * - `acme/native` on p2 (same prices, 200 output tokens at most);
 * - `acme/mixed`: p2 first, then p1 (native, failing over to translated);
 * - `acme/claude` on an.
 */
export const responsesConfig = testConfig({
  providers: {
    p1: {
      format: 'openai',
      base_url: 'http://upstream.test/p1/v1',
      api_key: 'sk-p1',
      max_tokens_field: 'max_completion_tokens',
    },
    p2: { format: 'openai', base_url: 'http://upstream.test/p2/v1', api_key: 'sk-p2', responses: true },
    an: { format: 'anthropic', base_url: 'http://upstream.test/an/v1', api_key: 'sk-an' },
    exa: { format: 'web-search', base_url: 'http://upstream.test/exa/v1', api_key: 'exa-key' },
  },
  models: [
    {
      id: 'acme/chat',
      max_output_tokens: 100,
      capabilities: { tools: true },
      endpoints: [
        {
          provider: 'p1',
          upstream_model: 'gpt-4o-mini',
          pricing: { prompt: '1', completion: '2', cached_prompt: '0.25' },
        },
      ],
    },
    {
      id: 'acme/native',
      max_output_tokens: 200,
      capabilities: { tools: true },
      endpoints: [
        {
          provider: 'p2',
          upstream_model: 'gpt-5-mini',
          pricing: { prompt: '1', completion: '2', cached_prompt: '0.25' },
        },
      ],
    },
    {
      id: 'acme/mixed',
      max_output_tokens: 100,
      capabilities: { tools: true },
      endpoints: [
        { provider: 'p2', upstream_model: 'gpt-5-mini', pricing: { prompt: '1', completion: '2' } },
        { provider: 'p1', upstream_model: 'gpt-4o-mini', pricing: { prompt: '1', completion: '2' } },
      ],
    },
    {
      id: 'acme/claude',
      max_output_tokens: 100,
      capabilities: { tools: true },
      endpoints: [
        { provider: 'an', upstream_model: 'claude-sonnet-4-5', pricing: { prompt: '3', completion: '15' } },
      ],
    },
  ],
});

/** The recorded non-streamed Response (gpt-4o-mini text), with other usage when given. */
export function nativeTextAnswer(usage?: { input: number; cached: number; output: number }): Json {
  const answer = JSON.parse(readFixture('openai-responses-text.recorded.json'));
  if (usage) {
    answer.usage = {
      input_tokens: usage.input,
      input_tokens_details: { cached_tokens: usage.cached },
      output_tokens: usage.output,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: usage.input + usage.output,
    };
  }
  return answer;
}

/** The recorded Responses streams of a fixture, as SSE bodies (one per stream the file holds). */
export function nativeStreamBodies(name: string): string[] {
  const bodies: string[] = [];
  let body = '';
  for (const line of readFixture(name).split('\n')) {
    if (line.trim() === '') continue;
    const { type } = JSON.parse(line) as { type: string };
    body += `event: ${type}\ndata: ${line}\n\n`;
    if (type === 'response.completed' || type === 'response.incomplete' || type === 'response.failed') {
      bodies.push(body);
      body = '';
    }
  }
  return bodies;
}

/** An SSE body as a stream that hands the gateway one event per read, as a network stream would. */
export function eventByEvent(body: string): Response {
  const events = body.split(/(?<=\n\n)/).filter((event) => event !== '');
  const encoder = new TextEncoder();
  let next = 0;
  return new Response(
    new ReadableStream<Uint8Array>({
      pull(controller) {
        if (next < events.length) controller.enqueue(encoder.encode(events[next++]));
        else controller.close();
      },
    }),
    { headers: { 'content-type': 'text/event-stream' } },
  );
}
