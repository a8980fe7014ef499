import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/gateway-error.js';
import { refuseStatefulFields, responsesToChat } from './responses-to-chat.js';
import type { ResponsesRequest } from './responses-types.js';

const translated = { searchBackend: false, native: false };

describe('responsesToChat', () => {
  it('maps every field with a chat form, and leaves out what has none', () => {
    const wire: ResponsesRequest = {
      model: 'acme/chat',
      input: 'Hi',
      instructions: 'Be brief.',
      stream: true,
      max_output_tokens: 64,
      temperature: 0.2,
      top_p: 0.9,
      presence_penalty: 0.1,
      frequency_penalty: 0.3,
      parallel_tool_calls: false,
      user: 'user-1',
      safety_identifier: 'sid',
      prompt_cache_key: 'pck',
      service_tier: 'flex',
      reasoning: { effort: 'low', summary: 'auto' },
      text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true } },
      metadata: { team: 'a' },
      tools: [{ type: 'function', name: 'f' }],
      tool_choice: 'required',
      // The Responses wire's own, with no chat form.
      store: true,
      include: ['reasoning.encrypted_content'],
      truncation: 'auto',
      // The gateway's own, as they are.
      models: ['acme/other'],
      provider: { sort: 'price' },
      preset: 'p',
      transforms: ['middle-out'],
      cache: true,
    };
    expect(responsesToChat(wire, translated).body).toEqual({
      model: 'acme/chat',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
      ],
      stream: true,
      max_tokens: 64,
      temperature: 0.2,
      top_p: 0.9,
      presence_penalty: 0.1,
      frequency_penalty: 0.3,
      parallel_tool_calls: false,
      user: 'user-1',
      safety_identifier: 'sid',
      prompt_cache_key: 'pck',
      service_tier: 'flex',
      reasoning_effort: 'low',
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'answer', schema: { type: 'object' }, strict: true },
      },
      metadata: { team: 'a' },
      tools: [{ type: 'function', function: { name: 'f' } }],
      tool_choice: 'required',
      models: ['acme/other'],
      provider: { sort: 'price' },
      preset: 'p',
      transforms: ['middle-out'],
      cache: true,
    });
  });

  it.each([
    [{ type: 'json_object' }, { type: 'json_object' }],
    [{ type: 'text' }, undefined],
    [undefined, undefined],
  ])('text.format %j → response_format %j', (format, expected) => {
    const body = responsesToChat(
      { model: 'm', input: 'x', text: format ? { format } : null },
      translated,
    ).body;
    expect(body.response_format).toEqual(expected);
  });

  it('null fields are as good as absent', () => {
    const wire: ResponsesRequest = {
      model: 'm',
      input: 'x',
      instructions: null,
      metadata: null,
      temperature: null,
      max_output_tokens: null,
      tools: null,
      tool_choice: null,
      reasoning: null,
      stream: null,
    };
    expect(responsesToChat(wire, translated).body).toEqual({
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
    });
  });

  it('a web_search tool with a search backend asks for the web plugin, beside the request’s own plugins', () => {
    const wire: ResponsesRequest = {
      model: 'm',
      input: 'news?',
      tools: [{ type: 'web_search' }],
      plugins: [{ id: 'other' }],
    };
    const translation = responsesToChat(wire, { searchBackend: true, native: false });
    expect(translation.body.plugins).toEqual([{ id: 'other' }, { id: 'web' }]);
    expect(translation.body.tools).toBeUndefined();
    // A hosted tool is never in the chat request's cache key (and a web-plugin request is not cached).
    expect(translation).toMatchObject({ dropped: [], lossless: false });
    const asked = responsesToChat(
      { ...wire, plugins: [{ id: 'web', max_results: 2 }] },
      { searchBackend: true, native: false },
    );
    expect(asked.body.plugins).toEqual([{ id: 'web', max_results: 2 }]);
  });

  it('removed tools and items left out make the translation lossy; custom tools are remembered', () => {
    const translation = responsesToChat(
      {
        model: 'm',
        input: [
          { type: 'reasoning', id: 'rs_1', summary: [] },
          { role: 'user', content: 'go' },
        ],
        tools: [
          { type: 'custom', name: 'apply_patch' },
          { type: 'code_interpreter', container: { type: 'auto' } },
        ],
      },
      translated,
    );
    expect(translation.dropped).toEqual(['code_interpreter']);
    expect(translation.lossless).toBe(false);
    expect([...translation.custom]).toEqual(['apply_patch']);
    expect(translation.tools).toEqual([{ type: 'custom', name: 'apply_patch' }]);
  });
});

describe('lossless: whether the chat request says all the Responses request asks', () => {
  it.each([
    [{}, true],
    [
      {
        metadata: { a: '1' },
        store: true,
        stream: true,
        text: { format: { type: 'text' } },
        reasoning: { effort: 'low' },
      },
      true,
    ],
    [{ include: ['reasoning.encrypted_content'] }, false],
    [{ truncation: 'auto' }, false],
    [{ text: { format: { type: 'text' }, verbosity: 'low' } }, false],
    [{ reasoning: { effort: 'low', summary: 'auto' } }, false],
    [{ tools: [{ type: 'web_search' }] }, false],
    [{ input: [{ type: 'reasoning', id: 'rs_1', summary: [] }] }, false],
    [{ include: null, truncation: null }, true],
  ])('%j → %s', (fields, lossless) => {
    expect(
      responsesToChat({ model: 'm', input: 'x', ...fields } as ResponsesRequest, translated).lossless,
    ).toBe(lossless);
  });
});

describe('refuseStatefulFields', () => {
  it.each([
    [{ previous_response_id: 'resp_1' }, 'previous_response_id'],
    [{ conversation: 'conv_1' }, 'conversation'],
    [{ conversation: { id: 'conv_1' } }, 'conversation'],
    [{ background: true }, 'background'],
  ])('%j → 400: the gateway is stateless', (fields, field) => {
    let error: unknown;
    try {
      refuseStatefulFields({ model: 'm', input: 'x', ...fields });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ status: 400, code: 'invalid_request' });
    expect((error as Error).message).toContain(`body.${field}`);
    expect((error as Error).message).toMatch(
      field === 'background'
        ? /stateless.*stream the answer instead/
        : /stateless.*whole conversation in input/,
    );
  });

  it.each([[{}], [{ previous_response_id: null, conversation: null, background: false }]])(
    '%j is accepted',
    (fields) => {
      expect(() => refuseStatefulFields({ model: 'm', input: 'x', ...fields })).not.toThrow();
    },
  );
});
