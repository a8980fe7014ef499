import type { MeteredUsage } from '../../metering/usage.js';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatToolCall,
  ChatToolCallDelta,
} from '../../providers/chat-types.js';
import { chatUsage } from './chat-usage.js';

type Choice = ChatCompletion['choices'][number];

/**
 * A cached completion as the chunks a stream of it would have sent: per choice, one chunk with the
 * whole message (role, text, tool calls with their ids and arguments), then one with its
 * `finish_reason`. The caller adds the terminal usage chunk.
 */
export function completionAsChunks(answer: Record<string, unknown>): ChatCompletionChunk[] {
  const completion = answer as unknown as ChatCompletion;
  const head = {
    id: completion.id,
    object: 'chat.completion.chunk' as const,
    created: completion.created,
    model: completion.model,
  };
  const chunks: ChatCompletionChunk[] = [];
  for (const choice of completion.choices) {
    const { role: _role, content, tool_calls, ...rest } = choice.message;
    const delta: ChatCompletionChunk['choices'][number]['delta'] = {
      role: 'assistant',
      content: content ?? null,
    };
    if (tool_calls?.length) delta.tool_calls = tool_calls.map((call, index) => ({ index, ...call }));
    chunks.push({
      ...head,
      choices: [{ index: choice.index, delta: { ...rest, ...delta }, finish_reason: null }],
    });
    chunks.push({
      ...head,
      choices: [{ index: choice.index, delta: {}, finish_reason: choice.finish_reason }],
    });
  }
  return chunks;
}

/**
 * The completion a whole stream adds up to, as a non-streamed call would have answered it: per
 * choice, its text joined, its tool calls assembled by index (ids, names, argument fragments), its
 * last `finish_reason`; `usage` from the meter.
 */
export function chunksAsCompletion(
  chunks: readonly ChatCompletionChunk[],
  servedModel: string,
  usage: MeteredUsage,
): Record<string, unknown> {
  const choices = new Map<
    number,
    { text: string[]; calls: Map<number, ChatToolCall>; finish: string | null }
  >();
  for (const chunk of chunks) {
    for (const { index, delta, finish_reason } of chunk.choices) {
      let choice = choices.get(index);
      if (!choice) {
        choice = { text: [], calls: new Map(), finish: null };
        choices.set(index, choice);
      }
      if (typeof delta?.content === 'string') choice.text.push(delta.content);
      for (const part of delta?.tool_calls ?? []) addToolCallPart(choice.calls, part);
      if (finish_reason) choice.finish = finish_reason;
    }
  }
  const first = chunks[0];
  const completion: ChatCompletion = {
    id: first?.id ?? '',
    object: 'chat.completion',
    created: first?.created ?? 0,
    model: servedModel,
    choices: [...choices]
      .sort(([a], [b]) => a - b)
      .map(
        ([index, c]): Choice => ({
          index,
          message: {
            role: 'assistant',
            content: c.text.length > 0 || c.calls.size === 0 ? c.text.join('') : null,
            ...(c.calls.size > 0 && {
              tool_calls: [...c.calls].sort(([a], [b]) => a - b).map(([, call]) => call),
            }),
          },
          finish_reason: c.finish,
        }),
      ),
    usage: chatUsage(usage),
  };
  return completion as unknown as Record<string, unknown>;
}

function addToolCallPart(calls: Map<number, ChatToolCall>, part: ChatToolCallDelta): void {
  let call = calls.get(part.index);
  if (!call) {
    call = { id: '', type: 'function', function: { name: '', arguments: '' } };
    calls.set(part.index, call);
  }
  if (part.id) call.id = part.id;
  if (part.function?.name) call.function.name += part.function.name;
  if (part.function?.arguments) call.function.arguments += part.function.arguments;
}
