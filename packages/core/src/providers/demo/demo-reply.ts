import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatMessage,
  ChatTool,
  ChatToolCall,
  ChatUsage,
} from '../chat-types.js';
import { demoOutput, offeredTools } from './demo-output.js';

/*
 * The offline demo model's answer as the OpenAI wire carries it, as pure functions of the upstream
 * request body (the one the OpenAI adapter sends). Deterministic: the same request gives the same
 * text, tool call and token counts. What it writes is `demo-output.ts`'s.
 */

/** Where a reply is stamped: its id and its Unix time in seconds. */
interface DemoStamp {
  id: string;
  created: number;
}

/** One answer: a text or a single tool call, with its token counts. */
interface DemoAnswer {
  content: string | null;
  toolCall: ChatToolCall | null;
  finishReason: 'stop' | 'length' | 'tool_calls';
  usage: ChatUsage;
}

/** Words per streamed content chunk. */
const DEMO_WORDS_PER_CHUNK = 3;

/** Tokens of a text for the demo: ⌈characters / 4⌉, the estimate the gateway uses elsewhere. */
const tokensOf = (characters: number) => Math.ceil(characters / 4);

/**
 * The answer to an upstream request body. Prompt tokens are ⌈characters / 4⌉ over the messages'
 * text, tool calls and the offered tools (at least 1); completion tokens are ⌈characters / 4⌉ over
 * the reply (at least 1). A `max_tokens` (or `max_completion_tokens`) below that cuts the reply to
 * 4 characters per allowed token, with finish reason `length`.
 */
export function demoAnswer(body: Record<string, unknown>, toolCallId: string): DemoAnswer {
  const messages = Array.isArray(body.messages) ? (body.messages as ChatMessage[]) : [];
  const tools = offeredTools(body);
  const promptTokens = Math.max(1, tokensOf(promptCharacters(messages, tools)));
  const limit = tokenLimit(body);
  const output = demoOutput(body, tools, promptTokens);
  const generated = output.tool ? output.arguments : output.text;
  const truncated = limit !== null && tokensOf(generated.length) > limit;
  const written = truncated ? generated.slice(0, limit * 4) : generated;
  const completionTokens = Math.max(1, tokensOf(written.length));
  const usage: ChatUsage = {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: 0 },
  };
  if (output.tool) {
    return {
      content: null,
      toolCall: {
        id: toolCallId,
        type: 'function',
        function: { name: output.tool.function.name, arguments: written },
      },
      finishReason: truncated ? 'length' : 'tool_calls',
      usage,
    };
  }
  return { content: written, toolCall: null, finishReason: truncated ? 'length' : 'stop', usage };
}

/** The answer as a non-streamed chat completion. */
export function demoCompletion(
  body: Record<string, unknown>,
  answer: DemoAnswer,
  stamp: DemoStamp,
): ChatCompletion {
  return {
    id: stamp.id,
    object: 'chat.completion',
    created: stamp.created,
    model: String(body.model ?? 'demo'),
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: answer.content,
          ...(answer.toolCall && { tool_calls: [answer.toolCall] }),
        },
        finish_reason: answer.finishReason,
      },
    ],
    usage: answer.usage,
  };
}

/**
 * The answer as stream chunks: a role chunk, the text a few words at a time (or the tool call's
 * name, then its arguments), a chunk with the finish reason, and, when the request asked for it
 * with `stream_options.include_usage`, a usage chunk without choices (as OpenAI sends it).
 */
export function demoChunks(
  body: Record<string, unknown>,
  answer: DemoAnswer,
  stamp: DemoStamp,
): ChatCompletionChunk[] {
  const model = String(body.model ?? 'demo');
  const chunk = (
    delta: ChatCompletionChunk['choices'][number]['delta'],
    finishReason: string | null = null,
  ): ChatCompletionChunk => ({
    id: stamp.id,
    object: 'chat.completion.chunk',
    created: stamp.created,
    model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  });

  const chunks: ChatCompletionChunk[] = [];
  if (answer.toolCall) {
    const { id, function: fn } = answer.toolCall;
    chunks.push(
      chunk({
        role: 'assistant',
        content: null,
        tool_calls: [{ index: 0, id, type: 'function', function: { name: fn.name, arguments: '' } }],
      }),
    );
    chunks.push(chunk({ tool_calls: [{ index: 0, function: { arguments: fn.arguments } }] }));
  } else {
    chunks.push(chunk({ role: 'assistant', content: '' }));
    for (const piece of wordGroups(answer.content ?? '', DEMO_WORDS_PER_CHUNK))
      chunks.push(chunk({ content: piece }));
  }
  chunks.push(chunk({}, answer.finishReason));
  const options = body.stream_options as { include_usage?: unknown } | undefined;
  if (options?.include_usage === true) {
    chunks.push({
      id: stamp.id,
      object: 'chat.completion.chunk',
      created: stamp.created,
      model,
      choices: [],
      usage: answer.usage,
    });
  }
  return chunks;
}

/** `text` (which starts with a word) in pieces of `words` words, each with the spaces after them. */
function wordGroups(text: string, words: number): string[] {
  const tokens = text.match(/\S+\s*/g) ?? [];
  const out: string[] = [];
  for (let i = 0; i < tokens.length; i += words) out.push(tokens.slice(i, i + words).join(''));
  return out;
}

function promptCharacters(messages: ChatMessage[], tools: ChatTool[]): number {
  let chars = 0;
  for (const message of messages) {
    if (typeof message.content === 'string') chars += message.content.length;
    else if (Array.isArray(message.content)) {
      for (const part of message.content) if (typeof part.text === 'string') chars += part.text.length;
    }
    for (const call of message.tool_calls ?? []) {
      chars += (call.function?.name?.length ?? 0) + (call.function?.arguments?.length ?? 0);
    }
  }
  if (tools.length > 0) chars += JSON.stringify(tools).length;
  return chars;
}

function tokenLimit(body: Record<string, unknown>): number | null {
  const asked = body.max_tokens ?? body.max_completion_tokens;
  return typeof asked === 'number' && Number.isInteger(asked) && asked > 0 ? asked : null;
}
