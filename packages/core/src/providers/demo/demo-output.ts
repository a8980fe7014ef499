import type { ChatMessage, ChatTool } from '../chat-types.js';
import { sampleJsonValue } from './demo-schema-value.js';

/*
 * What the offline demo model writes for a request, before any `max_tokens` cut: the turn an agent
 * loop expects next. A user's question with tools offered gets a tool call; the tools' results get a
 * text that uses them, so the loop ends; a `response_format` gets JSON of the asked shape. Otherwise
 * a fixed text that names the model and counts the messages without repeating them.
 */

/** A call to one of the offered tools with its arguments (JSON), or a text. */
type DemoOutput = { tool: ChatTool; arguments: string } | { tool: null; text: string };

/** Characters of one tool result quoted in the reply that uses it. */
const QUOTED_RESULT_CHARACTERS = 200;

/**
 * The demo's output for an upstream request body. A tool is called when `tool_choice` demands one
 * (`required` or a named function), or when tools are offered (`tool_choice` not `none`) and the
 * last message is the user's. Else a `response_format` json_schema gets a value valid against its
 * schema and json_object a JSON object; else, after tool results, a text quoting them; else the
 * fixed reply.
 */
export function demoOutput(
  body: Record<string, unknown>,
  tools: ChatTool[],
  promptTokens: number,
): DemoOutput {
  const messages = Array.isArray(body.messages) ? (body.messages as ChatMessage[]) : [];
  const model = String(body.model ?? 'demo');
  const tool = chosenTool(body, tools, messages.at(-1)?.role);
  if (tool) {
    return {
      tool,
      arguments: JSON.stringify(sampleJsonValue(tool.function.parameters ?? { type: 'object' })),
    };
  }
  const json = formattedJson(body.response_format, model, messages.length);
  if (json !== null) return { tool: null, text: json };
  const results = trailingToolResults(messages);
  if (results.length > 0) return { tool: null, text: toolResultsText(model, messages.length, results) };
  return { tool: null, text: replyText(model, messages.length, promptTokens) };
}

/** The functions the request offers, as the upstream body carries them. */
export function offeredTools(body: Record<string, unknown>): ChatTool[] {
  if (!Array.isArray(body.tools)) return [];
  return (body.tools as ChatTool[]).filter(
    (tool) => tool?.type === 'function' && typeof tool.function?.name === 'string',
  );
}

/** The tool to call now, or `null` for a text turn. */
function chosenTool(body: Record<string, unknown>, tools: ChatTool[], lastRole: string | undefined) {
  const choice = body.tool_choice;
  if (tools.length === 0 || choice === 'none') return null;
  if (typeof choice === 'object' && choice !== null) {
    const name = (choice as { function?: { name?: unknown } }).function?.name;
    return tools.find((tool) => tool.function.name === name) ?? tools[0]!;
  }
  return choice === 'required' || lastRole === 'user' ? tools[0]! : null;
}

/** The JSON a `response_format` asks for, or `null` when it asks for none. */
function formattedJson(format: unknown, model: string, messageCount: number): string | null {
  if (typeof format !== 'object' || format === null) return null;
  const { type, json_schema: jsonSchema } = format as { type?: unknown; json_schema?: { schema?: unknown } };
  if (type === 'json_schema') return JSON.stringify(sampleJsonValue(jsonSchema?.schema ?? {}));
  if (type === 'json_object') {
    return JSON.stringify({
      model,
      messages: messageCount,
      answer: 'a JSON object from the offline demo model of Tollgate',
    });
  }
  return null;
}

interface ToolResult {
  name: string;
  content: string;
}

/** The tool messages that end the conversation, each named after the call it answers. */
function trailingToolResults(messages: ChatMessage[]): ToolResult[] {
  let start = messages.length;
  while (start > 0 && messages[start - 1]!.role === 'tool') start--;
  const names = new Map<string, string>();
  for (const call of messages[start - 1]?.tool_calls ?? []) {
    if (call?.id && call.function?.name) names.set(call.id, call.function.name);
  }
  return messages.slice(start).map((message) => ({
    name: names.get(message.tool_call_id ?? '') ?? 'the tool',
    content: textOf(message.content),
  }));
}

function textOf(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (typeof part.text === 'string' ? part.text : '')).join('');
}

/** The answer after tool results: what each returned (cut to 200 characters), and the message count. */
function toolResultsText(model: string, messageCount: number, results: ToolResult[]): string {
  const quoted = results.map(({ name, content }) => {
    const text =
      content.length > QUOTED_RESULT_CHARACTERS ? `${content.slice(0, QUOTED_RESULT_CHARACTERS)}…` : content;
    return `${name} returned ${JSON.stringify(text)}`;
  });
  return (
    `Here is what the tools found: ${quoted.join('; ')}. ` +
    `(${model}, the offline demo model of Tollgate, read ${count(messageCount, 'message')} ` +
    'and answered from the tool results without calling any provider.)'
  );
}

/** The demo's fixed reply: names the model, counts the messages, never quotes them. */
function replyText(model: string, messageCount: number, promptTokens: number): string {
  return (
    `Hello from ${model}, the offline demo model of Tollgate. I read ${count(messageCount, 'message')} ` +
    `(about ${promptTokens} prompt tokens) and wrote this fixed reply without calling any provider. ` +
    'It is metered and charged like a real answer: see the gateway object for its cost.'
  );
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
