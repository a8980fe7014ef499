import type { ChatTool, ChatToolChoice } from '../../providers/chat-types.js';
import { invalidField } from './invalid-field.js';
import type { ResponsesTool } from './responses-types.js';

/** What the Responses `tools` and `tool_choice` of a request become on a chat call. */
interface ToolPlan {
  tools: ChatTool[];
  /** Names of the chat function tools that stand for `custom` tools (their calls go back as `custom_tool_call`). */
  custom: ReadonlySet<string>;
  /** Types of the tools removed (hosted tools the gateway does not serve), each once, in order. */
  dropped: string[];
  /** Whether a `web_search` tool asks for the gateway's web plugin. */
  webPlugin: boolean;
  /** Whether any hosted tool was given (kept natively, served by the plugin, or removed). */
  hosted: boolean;
  toolChoice: ChatToolChoice | undefined;
  /** The tools the Response echoes: the request's, minus the removed ones, function tools filled in. */
  echo: ResponsesTool[];
}

export interface ToolOptions {
  /** A web-search backend is configured: `web_search` tools become the web plugin, else they are removed. */
  searchBackend: boolean;
  /** Every route is native: tools pass through untouched, none is removed or becomes a plugin. */
  native: boolean;
}

/** `web_search`, `web_search_preview` and their dated versions. */
const isWebSearch = (type: string) => type.startsWith('web_search');

/** The one parameter of the function a `custom` tool becomes on a chat call. */
const CUSTOM_PARAMETERS = {
  type: 'object',
  properties: { input: { type: 'string', description: 'The free-form input of the tool.' } },
  required: ['input'],
  additionalProperties: false,
};

/**
 * The tools of a Responses request as chat tools (product.md "Tools"): `function` → a chat
 * function tool; `custom` (free-form) → a function with one string parameter `input`, its grammar
 * or format told in the description; `web_search*` → the gateway's web plugin when a search
 * backend is configured, else removed; any other hosted type removed. A `tool_choice` naming a
 * removed tool, or a tool not in `tools`, is `400 invalid_request`.
 */
export function convertTools(
  tools: readonly ResponsesTool[] | null | undefined,
  toolChoice: unknown,
  options: ToolOptions,
): ToolPlan {
  const chat: ChatTool[] = [];
  const custom = new Set<string>();
  const dropped: string[] = [];
  const echo: ResponsesTool[] = [];
  let webPlugin = false;
  let hosted = false;
  for (const [i, tool] of (tools ?? []).entries()) {
    if (!tool || typeof tool !== 'object' || typeof tool.type !== 'string') {
      throw invalidField(`tools[${i}].type`, 'must be a string');
    }
    if (tool.type === 'function' || tool.type === 'custom') {
      if (typeof tool.name !== 'string' || tool.name === '') {
        throw invalidField(`tools[${i}].name`, 'must be a non-empty string');
      }
      chat.push(tool.type === 'function' ? functionTool(tool) : customTool(tool));
      if (tool.type === 'custom') custom.add(tool.name);
      echo.push(tool.type === 'function' ? echoFunction(tool) : tool);
      continue;
    }
    hosted = true;
    if (options.native) {
      echo.push(tool);
    } else if (isWebSearch(tool.type) && options.searchBackend) {
      webPlugin = true;
      echo.push(tool);
    } else if (!dropped.includes(tool.type)) {
      dropped.push(tool.type);
    }
  }
  const choice = convertToolChoice(toolChoice, { chat, dropped, webPlugin, native: options.native });
  return {
    tools: choice.tools ?? chat,
    custom,
    dropped,
    webPlugin,
    hosted,
    toolChoice: choice.toolChoice,
    echo,
  };
}

function functionTool(tool: ResponsesTool): ChatTool {
  const fn: ChatTool['function'] = { name: tool.name! };
  if (typeof tool.description === 'string') fn.description = tool.description;
  if (tool.parameters && typeof tool.parameters === 'object') fn.parameters = tool.parameters;
  if (typeof tool.strict === 'boolean') fn.strict = tool.strict;
  return { type: 'function', function: fn };
}

function customTool(tool: ResponsesTool): ChatTool {
  const told = typeof tool.description === 'string' ? `${tool.description}\n\n` : '';
  return {
    type: 'function',
    function: {
      name: tool.name!,
      description: told + formatHint(tool.format),
      parameters: CUSTOM_PARAMETERS,
    },
  };
}

/** How a chat model is told what a custom tool's free-form `input` must look like. */
function formatHint(format: unknown): string {
  const f = (format ?? {}) as { type?: unknown; syntax?: unknown; definition?: unknown };
  if (f.type === 'grammar' && typeof f.definition === 'string') {
    const syntax = typeof f.syntax === 'string' ? `${f.syntax} ` : '';
    return `Put the tool's whole input, as free-form text following this ${syntax}grammar, in "input":\n${f.definition}`;
  }
  return `Put the tool's whole input, as free-form text, in "input".`;
}

/** A function tool as the Response echoes it: `description`, `parameters` and `strict` present, `null` when not given. */
function echoFunction(tool: ResponsesTool): ResponsesTool {
  return {
    ...tool,
    description: tool.description ?? null,
    parameters: tool.parameters ?? null,
    strict: tool.strict ?? null,
  };
}

interface ChoiceContext {
  chat: ChatTool[];
  dropped: readonly string[];
  webPlugin: boolean;
  native: boolean;
}

/**
 * `tool_choice` on a chat call: the modes as they are; a named function or custom tool as chat's
 * `{type: "function", function: {name}}`; `allowed_tools` as its mode over only the tools it lists;
 * a hosted tool served by the web plugin (or natively) as `auto`.
 */
function convertToolChoice(
  value: unknown,
  context: ChoiceContext,
): { toolChoice: ChatToolChoice | undefined; tools?: ChatTool[] } {
  if (value === undefined || value === null) return { toolChoice: undefined };
  if (value === 'none' || value === 'auto' || value === 'required') return { toolChoice: value };
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw invalidField('tool_choice', 'must be "none", "auto", "required" or an object naming a tool');
  }
  const choice = value as { type?: unknown; name?: unknown; mode?: unknown; tools?: unknown };
  const type = typeof choice.type === 'string' ? choice.type : '';
  if (type === 'function' || type === 'custom') {
    const name = typeof choice.name === 'string' ? choice.name : '';
    if (!context.chat.some((tool) => tool.function.name === name)) {
      throw invalidField('tool_choice.name', `names the tool "${name}", which is not in tools`);
    }
    return { toolChoice: { type: 'function', function: { name } } };
  }
  if (type === 'allowed_tools') return allowedTools(choice, context.chat);
  if (context.dropped.includes(type)) {
    throw invalidField(
      'tool_choice',
      `names the ${type} tool, which the gateway removed from this request (it serves no ${type} tool; see X-Gateway-Dropped-Tools)`,
    );
  }
  if (type !== '' && (context.native || (context.webPlugin && isWebSearch(type))))
    return { toolChoice: 'auto' };
  throw invalidField('tool_choice', `names a ${type || 'tool without a type'}, which is not in tools`);
}

function allowedTools(
  choice: { mode?: unknown; tools?: unknown },
  chat: ChatTool[],
): { toolChoice: ChatToolChoice; tools: ChatTool[] } {
  if (choice.mode !== 'auto' && choice.mode !== 'required') {
    throw invalidField('tool_choice.mode', 'must be "auto" or "required"');
  }
  if (!Array.isArray(choice.tools)) throw invalidField('tool_choice.tools', 'must be an array');
  const names = new Set<string>();
  for (const tool of choice.tools as { name?: unknown }[]) {
    if (tool && typeof tool.name === 'string') names.add(tool.name);
  }
  return { toolChoice: choice.mode, tools: chat.filter((tool) => names.has(tool.function.name)) };
}
