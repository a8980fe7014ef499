import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/gateway-error.js';
import { convertTools, type ToolOptions } from './convert-responses-tools.js';
import type { ResponsesTool } from './responses-types.js';

const weather: ResponsesTool = {
  type: 'function',
  name: 'get_weather',
  description: 'Weather of a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: true,
};
const bare: ResponsesTool = { type: 'function', name: 'ping' };
const patch: ResponsesTool = {
  type: 'custom',
  name: 'apply_patch',
  description: 'Edit files.',
  format: { type: 'grammar', syntax: 'lark', definition: 'start: "*** Begin Patch"' },
};
const webSearch: ResponsesTool = { type: 'web_search_preview', search_context_size: 'low' };
const mcp: ResponsesTool = { type: 'mcp', server_label: 'deepwiki', server_url: 'https://mcp.example' };
const files: ResponsesTool = { type: 'file_search', vector_store_ids: ['vs_1'] };

const translated: ToolOptions = { searchBackend: false, native: false };
const withSearch: ToolOptions = { searchBackend: true, native: false };
const native: ToolOptions = { searchBackend: false, native: true };

describe('convertTools', () => {
  it('a function tool becomes a chat function tool, and is echoed with null for what it left out', () => {
    const plan = convertTools([weather, bare], undefined, translated);
    expect(plan.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Weather of a city',
          parameters: weather.parameters,
          strict: true,
        },
      },
      { type: 'function', function: { name: 'ping' } },
    ]);
    expect(plan.echo).toEqual([
      weather,
      { type: 'function', name: 'ping', description: null, parameters: null, strict: null },
    ]);
    expect(plan).toMatchObject({ dropped: [], webPlugin: false, toolChoice: undefined });
    expect([...plan.custom]).toEqual([]);
  });

  it('a custom tool becomes a function of one string "input", its grammar told in the description', () => {
    const plan = convertTools([patch], undefined, translated);
    expect(plan.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'apply_patch',
          description:
            'Edit files.\n\nPut the tool\'s whole input, as free-form text following this lark grammar, in "input":\nstart: "*** Begin Patch"',
          parameters: {
            type: 'object',
            properties: { input: { type: 'string', description: 'The free-form input of the tool.' } },
            required: ['input'],
            additionalProperties: false,
          },
        },
      },
    ]);
    expect([...plan.custom]).toEqual(['apply_patch']);
    expect(plan.echo).toEqual([patch]);
  });

  it.each([
    [
      'no search backend: web_search is removed like any hosted tool',
      translated,
      ['web_search_preview', 'mcp', 'file_search'],
      false,
    ],
    [
      'a search backend: web_search becomes the web plugin, the others are removed',
      withSearch,
      ['mcp', 'file_search'],
      true,
    ],
    ['every route native: nothing is removed', native, [], false],
  ])('%s', (_, options, dropped, webPlugin) => {
    const plan = convertTools([weather, webSearch, mcp, mcp, files], undefined, options);
    expect(plan.dropped).toEqual(dropped);
    expect(plan.webPlugin).toBe(webPlugin);
    expect(plan.tools.map((tool) => tool.function.name)).toEqual(['get_weather']);
    expect(plan.echo.map((tool) => tool.type)).toEqual(
      ['function', 'web_search_preview', 'mcp', 'mcp', 'file_search'].filter(
        (type) => !dropped.includes(type),
      ),
    );
  });

  it.each([
    ['auto', 'auto'],
    ['none', 'none'],
    ['required', 'required'],
    [
      { type: 'function', name: 'get_weather' },
      { type: 'function', function: { name: 'get_weather' } },
    ],
    [
      { type: 'custom', name: 'apply_patch' },
      { type: 'function', function: { name: 'apply_patch' } },
    ],
  ])('tool_choice %j → %j', (choice, expected) => {
    expect(convertTools([weather, patch], choice, translated).toolChoice).toEqual(expected);
  });

  it('tool_choice allowed_tools keeps only the tools it lists, with its mode', () => {
    const plan = convertTools(
      [weather, bare, patch],
      { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'ping' }] },
      translated,
    );
    expect(plan.toolChoice).toBe('required');
    expect(plan.tools.map((tool) => tool.function.name)).toEqual(['ping']);
  });

  it('tool_choice naming a hosted tool the web plugin or a native route serves is auto', () => {
    expect(convertTools([webSearch], { type: 'web_search_preview' }, withSearch).toolChoice).toBe('auto');
    expect(convertTools([mcp], { type: 'mcp', server_label: 'deepwiki' }, native).toolChoice).toBe('auto');
  });

  it.each([
    ['a removed tool', [mcp], { type: 'mcp', server_label: 'deepwiki' }, 'the gateway removed'],
    ['a removed web search', [webSearch], { type: 'web_search_preview' }, 'the gateway removed'],
    ['a function not in tools', [weather], { type: 'function', name: 'nope' }, 'not in tools'],
    ['a custom tool not in tools', [weather], { type: 'custom', name: 'nope' }, 'not in tools'],
    ['a hosted tool not in tools', [weather], { type: 'file_search' }, 'not in tools'],
    ['a mode that does not exist', [weather], 'sometimes', 'tool_choice'],
  ])('tool_choice naming %s is 400', (_, tools, choice, words) => {
    let error: unknown;
    try {
      convertTools(tools, choice, translated);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ status: 400, code: 'invalid_request' });
    expect((error as Error).message).toContain(words);
  });

  it.each([
    [[{ name: 'x' }], 'body.tools[0].type'],
    [[{ type: 'function' }], 'body.tools[0].name'],
    [[{ type: 'custom', name: '' }], 'body.tools[0].name'],
  ])('a tool %j is 400 naming %s', (tools, field) => {
    expect(() => convertTools(tools as ResponsesTool[], undefined, translated)).toThrow(field);
  });
});
