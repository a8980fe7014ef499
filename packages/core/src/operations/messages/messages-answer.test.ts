import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/gateway-error.js';
import { passThroughStream } from '../../providers/anthropic/anthropic-messages.js';
import { anthropicWireBody } from '../../providers/anthropic/wire-fixtures.test-support.js';
import type { ChatCompletion } from '../../providers/chat-types.js';
import { byteStream, collect, fixtureJson } from '../../providers/wire-fixtures.test-support.js';
import { grammarViolations, parseEvents } from './anthropic-grammar.test-support.js';
import { eventText } from './chat-stream-to-events.js';
import { completionToMessage, messageIdOf, messagesStopReason } from './chat-to-messages.js';
import { eventsAsMessage, messageAsEvents } from './messages-replay.js';
import { readAnthropicKey } from './read-anthropic-key.js';
import { anthropicErrorBody, renderMessagesError } from './render-messages-error.js';

const completion = (
  message: ChatCompletion['choices'][number]['message'],
  finish = 'stop',
): ChatCompletion => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'up',
  choices: [{ index: 0, message, finish_reason: finish }],
});
const usage = { promptTokens: 50, cachedTokens: 10, cacheWriteTokens: 0, completionTokens: 7 };

describe('completionToMessage', () => {
  it('text and tool calls become blocks, the call id kept, arguments parsed; usage input less the cached part', () => {
    const message = completionToMessage(
      completion(
        {
          role: 'assistant',
          content: 'Reading it.',
          tool_calls: [
            { id: 'call_9', type: 'function', function: { name: 'Read', arguments: '{"path":"a"}' } },
          ],
        },
        'tool_calls',
      ),
      usage,
      { id: 'msg_1', model: 'acme/chat' },
    );
    expect(message).toEqual({
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'acme/chat',
      content: [
        { type: 'text', text: 'Reading it.' },
        { type: 'tool_use', id: 'call_9', name: 'Read', input: { path: 'a' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: {
        input_tokens: 40,
        output_tokens: 7,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 10,
      },
    });
  });

  it('no text block for an empty text; arguments cut off by max_tokens give an empty input', () => {
    const message = completionToMessage(
      completion(
        {
          role: 'assistant',
          content: '',
          tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{"a":' } }],
        },
        'length',
      ),
      usage,
      { id: 'msg_1', model: 'm' },
    );
    expect(message.content).toEqual([{ type: 'tool_use', id: 'c', name: 'f', input: {} }]);
    expect(message.stop_reason).toBe('max_tokens');
  });

  it.each([
    ['stop', 'end_turn'],
    ['length', 'max_tokens'],
    ['tool_calls', 'tool_use'],
    ['function_call', 'tool_use'],
    ['content_filter', 'refusal'],
    [null, 'end_turn'],
    ['something_new', 'end_turn'],
  ])('finish_reason %s → stop_reason %s', (finish, stop) => {
    expect(messagesStopReason(finish)).toBe(stop);
  });

  it('the answer id follows the request id', () => {
    expect(messageIdOf('req_0abc')).toBe('msg_0abc');
  });
});

describe('messageAsEvents / eventsAsMessage (the response cache)', () => {
  const answers = [
    fixtureJson('anthropic-message-tool-use.json'),
    fixtureJson('anthropic-message-text-and-tool-use-no-args.json'),
    {
      id: 'msg_t',
      type: 'message',
      role: 'assistant',
      model: 'claude',
      content: [
        { type: 'thinking', thinking: 'Let me see.', signature: 'EqQBsig' },
        { type: 'redacted_thinking', data: 'opaque' },
        { type: 'text', text: 'Done.' },
      ],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: {
        input_tokens: 5,
        output_tokens: 9,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
      },
    },
  ] as Record<string, unknown>[];

  it.each(answers.map((answer) => [answer.id, answer]))(
    '%s: replayed as a stream in Anthropic’s grammar, assembled back unchanged',
    (_id, answer) => {
      const events = messageAsEvents(answer as Record<string, unknown>);
      const parsed = parseEvents(events.map(eventText).join(''));
      expect(
        grammarViolations(parsed).filter((v) => !v.startsWith('message_start has input_tokens')),
      ).toEqual([]);
      const back = eventsAsMessage(events);
      // Anthropic's message_delta always names stop_sequence; a cached answer without it gets null.
      expect(back).toEqual({ stop_sequence: null, ...(answer as object) });
    },
  );

  it('a recorded stream assembles into the message it streamed (text, tool input, usage of both ends)', async () => {
    const stream = passThroughStream(
      byteStream([new TextEncoder().encode(anthropicWireBody('anthropic-stream-text-then-tool-use.sse'))]),
    );
    const message = eventsAsMessage(await collect(stream.chunks));
    expect(message.content).toEqual([
      { type: 'text', text: "I'll check the current weather in Paris for you." },
      {
        type: 'tool_use',
        id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn',
        name: 'get_weather',
        input: { location: 'Paris' },
      },
    ]);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.usage).toMatchObject({ input_tokens: 377 });
  });
});

describe('readAnthropicKey', () => {
  const request = (headers: Record<string, string>) => new Request('http://g/v1/messages', { headers });
  const codeOf = (headers: Record<string, string>) => {
    try {
      readAnthropicKey(request(headers));
    } catch (error) {
      return (error as GatewayError).code;
    }
    return null;
  };

  it.each([
    [{ 'x-api-key': 'gw_live_a' }, 'gw_live_a'],
    [{ authorization: 'Bearer gw_live_a' }, 'gw_live_a'],
    [{ 'x-api-key': 'gw_live_a', authorization: 'Bearer gw_live_a' }, 'gw_live_a'],
    [{ 'x-api-key': '', authorization: 'Bearer gw_live_b' }, 'gw_live_b'],
    [{ 'x-api-key': 'gw_live_a', authorization: '' }, 'gw_live_a'],
  ])('%j → %s', (headers, key) => {
    expect(readAnthropicKey(request(headers))).toBe(key);
  });

  it.each([
    [{}, 'unauthenticated'],
    [{ 'x-api-key': '', authorization: '' }, 'unauthenticated'],
    [{ authorization: 'Basic abc' }, 'unauthenticated'],
    [{ 'x-api-key': 'gw_live_a', authorization: 'Bearer gw_live_b' }, 'invalid_api_key'],
  ])('%j → 401 %s', (headers, code) => {
    expect(codeOf(headers)).toBe(code);
  });
});

describe('renderMessagesError', () => {
  it.each([
    ['invalid_request', 400, 'invalid_request_error'],
    ['unauthenticated', 401, 'authentication_error'],
    ['key_limit_exceeded', 402, 'billing_error'],
    ['wrong_key_scope', 403, 'permission_error'],
    ['model_not_found', 404, 'not_found_error'],
    ['request_in_flight', 409, 'invalid_request_error'],
    ['payload_too_large', 413, 'request_too_large'],
    ['guardrail_blocked', 422, 'invalid_request_error'],
    ['rate_limited', 429, 'rate_limit_error'],
    ['internal_error', 500, 'api_error'],
    ['upstream_error', 502, 'api_error'],
    ['no_provider_available', 503, 'api_error'],
    ['upstream_timeout', 504, 'api_error'],
  ] as const)('%s → %d %s, the code first in the message', async (code, status, type) => {
    const response = renderMessagesError(new GatewayError(code, 'Why.', { 'Retry-After': '3' }), 'req_1');
    expect(response.status).toBe(status);
    expect(response.headers.get('retry-after')).toBe('3');
    expect(await response.json()).toEqual({
      type: 'error',
      error: { type, message: `${code}: Why.` },
      request_id: 'req_1',
    });
  });

  it('a walk whose last attempt got 529 is 529 overloaded_error; any other upstream_error stays 502', async () => {
    const overloaded = new GatewayError('upstream_error', 'Every provider tried failed.');
    overloaded.lastUpstreamStatus = 529;
    const response = renderMessagesError(overloaded, 'req_1');
    expect(response.status).toBe(529);
    expect(anthropicErrorBody(overloaded, 'req_1').error.type).toBe('overloaded_error');
    const other = new GatewayError('upstream_error', 'x');
    other.lastUpstreamStatus = 503;
    expect(renderMessagesError(other, 'req_1').status).toBe(502);
  });
});
