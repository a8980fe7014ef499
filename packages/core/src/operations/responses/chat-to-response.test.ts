import { describe, expect, it } from 'vitest';
import { meteredUsage } from '../../metering/usage.js';
import type { ChatCompletion } from '../../providers/chat-types.js';
import { completionOutput, customInput, reasoningTokensOf } from './chat-to-response.js';
import { responseEnd, responseShell, responsesUsage } from './response-object.js';

/** Ids `msg_1`, `fc_2`, … in the order they are made. */
function counter() {
  let n = 0;
  return (prefix: string) => `${prefix}_${++n}`;
}

function completion(
  message: Partial<ChatCompletion['choices'][number]['message']>,
  finish = 'stop',
): ChatCompletion {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'gpt-4o-mini',
    choices: [{ index: 0, message: { role: 'assistant', content: null, ...message }, finish_reason: finish }],
  };
}

const call = (id: string, name: string, args: string) => ({
  id,
  type: 'function' as const,
  function: { name, arguments: args },
});

describe('completionOutput', () => {
  it.each([
    {
      name: 'text: one message item with one output_text part',
      message: { content: 'Hello!' },
      output: [
        {
          type: 'message',
          id: 'msg_1',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Hello!', annotations: [], logprobs: [] }],
        },
      ],
    },
    {
      name: 'tool calls only: no message item, a function_call per call with the upstream id as call_id',
      message: {
        content: '',
        tool_calls: [call('call_a', 'get_weather', '{"city":"Paris"}'), call('call_b', 'get_time', '{}')],
      },
      output: [
        {
          type: 'function_call',
          id: 'fc_1',
          status: 'completed',
          call_id: 'call_a',
          name: 'get_weather',
          arguments: '{"city":"Paris"}',
        },
        {
          type: 'function_call',
          id: 'fc_2',
          status: 'completed',
          call_id: 'call_b',
          name: 'get_time',
          arguments: '{}',
        },
      ],
    },
    {
      name: 'text and a custom tool call: the custom input taken out of {"input": …}',
      message: {
        content: 'Patching.',
        tool_calls: [call('call_p', 'apply_patch', '{"input":"*** Begin Patch\\n"}')],
      },
      output: [
        {
          type: 'message',
          id: 'msg_1',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Patching.', annotations: [], logprobs: [] }],
        },
        {
          type: 'custom_tool_call',
          id: 'ctc_2',
          status: 'completed',
          call_id: 'call_p',
          name: 'apply_patch',
          input: '*** Begin Patch\n',
        },
      ],
    },
    {
      name: 'a refusal: a message item with a refusal part',
      message: { content: null, refusal: 'I cannot help with that.' },
      output: [
        {
          type: 'message',
          id: 'msg_1',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'refusal', refusal: 'I cannot help with that.' }],
        },
      ],
    },
    { name: 'nothing: no items', message: { content: '' }, output: [] },
  ])('$name', ({ message, output }) => {
    expect(completionOutput(completion(message), new Set(['apply_patch']), 'completed', counter())).toEqual(
      output,
    );
  });

  it('items of an answer cut short are incomplete', () => {
    const [item] = completionOutput(
      completion({ content: 'Hel' }, 'length'),
      new Set(),
      'incomplete',
      counter(),
    );
    expect(item?.status).toBe('incomplete');
  });
});

describe('customInput', () => {
  it.each([
    ['{"input":"a b"}', 'a b'],
    ['{"input": 3}', '{"input": 3}'],
    ['{"input":"cut', '{"input":"cut'],
    ['raw text', 'raw text'],
  ])('%j → %j', (args, input) => {
    expect(customInput(args)).toBe(input);
  });
});

describe('responseEnd', () => {
  it.each([
    ['stop', { status: 'completed', incomplete_details: null }],
    ['tool_calls', { status: 'completed', incomplete_details: null }],
    [null, { status: 'completed', incomplete_details: null }],
    ['length', { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } }],
    ['content_filter', { status: 'incomplete', incomplete_details: { reason: 'content_filter' } }],
  ])('%j → %j', (finish, end) => {
    expect(responseEnd(finish)).toEqual(end);
  });
});

describe('responsesUsage and reasoning tokens', () => {
  it('input less nothing: cached tokens are a detail of input_tokens', () => {
    expect(
      responsesUsage(meteredUsage({ promptTokens: 100, cachedTokens: 40, completionTokens: 7 }), 3),
    ).toEqual({
      input_tokens: 100,
      input_tokens_details: { cached_tokens: 40 },
      output_tokens: 7,
      output_tokens_details: { reasoning_tokens: 3 },
      total_tokens: 107,
    });
  });

  it.each([
    [{ completion_tokens_details: { reasoning_tokens: 64 } }, 64],
    [{}, 0],
    [{ completion_tokens_details: { reasoning_tokens: -1 } }, 0],
  ])('reasoning tokens of %j: %d', (usage, tokens) => {
    const answer = {
      ...completion({ content: 'x' }),
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2, ...usage },
    };
    expect(reasoningTokensOf(answer)).toBe(tokens);
  });
});

describe('responseShell', () => {
  it('every field the ResponseResource schema requires, defaulted as OpenAI defaults it', () => {
    const shell = responseShell({ model: 'acme/chat', input: 'x' }, [], {
      id: 'resp_1',
      model: 'acme/chat',
      createdAt: 1_700_000_000_999,
    });
    expect(shell).toEqual({
      id: 'resp_1',
      object: 'response',
      created_at: 1_700_000_000,
      status: 'in_progress',
      background: false,
      completed_at: null,
      error: null,
      incomplete_details: null,
      instructions: null,
      max_output_tokens: null,
      max_tool_calls: null,
      model: 'acme/chat',
      output: [],
      parallel_tool_calls: true,
      previous_response_id: null,
      prompt_cache_key: null,
      reasoning: null,
      safety_identifier: null,
      service_tier: 'default',
      store: false,
      temperature: 1,
      text: { format: { type: 'text' } },
      tool_choice: 'auto',
      tools: [],
      top_logprobs: 0,
      top_p: 1,
      presence_penalty: 0,
      frequency_penalty: 0,
      truncation: 'disabled',
      usage: null,
      user: null,
      metadata: {},
    });
  });

  it('echoes what the request gave', () => {
    const shell = responseShell(
      {
        model: 'acme/chat',
        input: 'x',
        instructions: 'Be brief.',
        max_output_tokens: 50,
        temperature: 0.5,
        top_p: 0.8,
        parallel_tool_calls: false,
        reasoning: { effort: 'high' },
        text: { format: { type: 'json_object' }, verbosity: 'low' },
        tool_choice: { type: 'function', name: 'f' },
        metadata: { team: 'a' },
        store: true,
      },
      [{ type: 'function', name: 'f', description: null, parameters: null, strict: null }],
      { id: 'resp_1', model: 'acme/chat', createdAt: 0 },
    );
    expect(shell).toMatchObject({
      instructions: 'Be brief.',
      max_output_tokens: 50,
      temperature: 0.5,
      top_p: 0.8,
      parallel_tool_calls: false,
      reasoning: { effort: 'high', summary: null },
      text: { format: { type: 'json_object' }, verbosity: 'low' },
      tool_choice: { type: 'function', name: 'f' },
      tools: [{ type: 'function', name: 'f', description: null, parameters: null, strict: null }],
      metadata: { team: 'a' },
      // Nothing is stored, whatever the request asked.
      store: false,
    });
  });
});
