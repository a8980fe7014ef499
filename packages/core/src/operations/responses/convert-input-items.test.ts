import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/gateway-error.js';
import type { ChatMessage } from '../../providers/chat-types.js';
import { convertInput } from './convert-input-items.js';

type Item = Record<string, unknown>;

const call = (id: string, name = 'get_weather', args = '{"city":"Paris"}'): Item => ({
  type: 'function_call',
  id: `fc_${id}`,
  call_id: id,
  name,
  arguments: args,
  status: 'completed',
});

const toolCall = (id: string, name = 'get_weather', args = '{"city":"Paris"}') => ({
  id,
  type: 'function' as const,
  function: { name, arguments: args },
});

const CASES: {
  name: string;
  input: string | Item[];
  instructions?: string;
  messages: ChatMessage[];
  lossless?: boolean;
}[] = [
  {
    name: 'a string is one user message',
    input: 'Hello',
    messages: [{ role: 'user', content: 'Hello' }],
  },
  {
    name: 'instructions lead as a system message',
    input: 'Hello',
    instructions: 'Be brief.',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hello' },
    ],
  },
  {
    name: 'messages with string content, with or without type, every role',
    input: [
      { type: 'message', role: 'system', content: 'S' },
      { role: 'developer', content: 'D' },
      { role: 'user', content: 'U' },
      { type: 'message', role: 'assistant', content: 'A' },
    ],
    messages: [
      { role: 'system', content: 'S' },
      { role: 'developer', content: 'D' },
      { role: 'user', content: 'U' },
      { role: 'assistant', content: 'A' },
    ],
  },
  {
    name: 'user parts: input_text as text, input_image as image_url (detail kept), input_file as file',
    input: [
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'What is this?' },
          { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'low' },
          { type: 'input_file', filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBE' },
        ],
      },
    ],
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } },
          { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBE', filename: 'a.pdf' } },
        ],
      },
    ],
  },
  {
    name: 'an earlier answer (output_text and refusal parts) is one assistant text',
    input: [
      {
        type: 'message',
        id: 'msg_1',
        status: 'completed',
        role: 'assistant',
        content: [
          { type: 'output_text', text: 'Part one. ', annotations: [] },
          { type: 'refusal', refusal: 'No more.' },
        ],
      },
    ],
    messages: [{ role: 'assistant', content: 'Part one. No more.' }],
  },
  {
    name: 'a function call joins the assistant turn before it; its output follows as a tool message',
    input: [
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: 'Let me look.' },
      call('call_1'),
      { type: 'function_call_output', call_id: 'call_1', output: '{"temp":21}' },
      { role: 'assistant', content: 'It is 21°C.' },
    ],
    messages: [
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: 'Let me look.', tool_calls: [toolCall('call_1')] },
      { role: 'tool', tool_call_id: 'call_1', content: '{"temp":21}' },
      { role: 'assistant', content: 'It is 21°C.' },
    ],
  },
  {
    name: 'parallel calls are one assistant turn; a call after a tool result opens a new one',
    input: [
      { role: 'user', content: 'Two cities' },
      call('a', 'get_weather', '{"city":"Paris"}'),
      call('b', 'get_weather', '{"city":"Rome"}'),
      { type: 'function_call_output', call_id: 'a', output: 'sunny' },
      { type: 'function_call_output', call_id: 'b', output: 'rain' },
      call('c', 'get_time', '{}'),
      { type: 'function_call_output', call_id: 'c', output: [{ type: 'input_text', text: 'noon' }] },
    ],
    messages: [
      { role: 'user', content: 'Two cities' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [toolCall('a'), toolCall('b', 'get_weather', '{"city":"Rome"}')],
      },
      { role: 'tool', tool_call_id: 'a', content: 'sunny' },
      { role: 'tool', tool_call_id: 'b', content: 'rain' },
      { role: 'assistant', content: null, tool_calls: [toolCall('c', 'get_time', '{}')] },
      { role: 'tool', tool_call_id: 'c', content: 'noon' },
    ],
  },
  {
    name: 'a custom tool call carries its input as {"input": …}; its output is a tool message',
    input: [
      {
        type: 'custom_tool_call',
        id: 'ctc_1',
        call_id: 'call_p',
        name: 'apply_patch',
        input: '*** Begin Patch',
      },
      { type: 'custom_tool_call_output', call_id: 'call_p', output: 'Done!' },
    ],
    messages: [
      {
        role: 'assistant',
        content: null,
        tool_calls: [toolCall('call_p', 'apply_patch', '{"input":"*** Begin Patch"}')],
      },
      { role: 'tool', tool_call_id: 'call_p', content: 'Done!' },
    ],
  },
  {
    name: 'reasoning and hosted tools’ items have no chat form: left out, and the input is not lossless',
    input: [
      { role: 'user', content: 'Hi' },
      { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAAA' },
      { type: 'web_search_call', id: 'ws_1', status: 'completed' },
      { role: 'assistant', content: 'Hello' },
    ],
    messages: [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello' },
    ],
    lossless: false,
  },
];

describe('convertInput', () => {
  it.each(CASES)('$name', ({ input, instructions, messages, lossless }) => {
    expect(convertInput(input, instructions)).toEqual({ messages, lossless: lossless ?? true });
  });

  it.each([
    ['an item that is not an object', ['hello'], 'body.input[0]: must be an object'],
    ['a message with an unknown role', [{ role: 'tool', content: 'x' }], 'body.input[0].role'],
    ['a message without content', [{ role: 'user' }], 'body.input[0].content'],
    ['a part of an unknown type', [{ role: 'user', content: [{ type: 'input_audio' }] }], 'content[0].type'],
    [
      'an image by file_id',
      [{ role: 'user', content: [{ type: 'input_image', file_id: 'file-1' }] }],
      'content[0].image_url',
    ],
    ['a function call without call_id', [{ type: 'function_call', name: 'f', arguments: '{}' }], 'call_id'],
    ['a function call output without output', [{ type: 'function_call_output', call_id: 'c' }], 'output'],
    ['an item without a type or role', [{ content: 'x' }], 'body.input[0].type'],
    ['an item_reference (needs stored state)', [{ type: 'item_reference', id: 'msg_1' }], 'stateless'],
  ])('refuses %s with 400 naming the field', (_, input, field) => {
    let error: unknown;
    try {
      convertInput(input as Item[], null);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ status: 400, code: 'invalid_request' });
    expect((error as Error).message).toContain(field);
  });
});
