import type { ChatCompletion, ChatToolCall } from '../../providers/chat-types.js';
import type { ItemStatus, OutputItem } from './responses-types.js';

/** Makes a new id with a prefix (`msg`, `fc`, `ctc`): `newId` in production, a counter in tests. */
export type MakeId = (prefix: string) => string;

/**
 * The output items of a chat completion's first choice (product.md "Answer"): a `message` item
 * (`msg_…`) with one `output_text` part when the text is not empty (or a `refusal` part), then one
 * item per tool call in order — `function_call` (`fc_…`) with the upstream's tool-call id as
 * `call_id` and `arguments` as the JSON string it sent, or `custom_tool_call` (`ctc_…`) for a
 * function standing for a custom tool, its `input` taken back out of `{"input": …}`. Items are
 * `incomplete` when the answer was cut short, else `completed`.
 */
export function completionOutput(
  completion: ChatCompletion,
  custom: ReadonlySet<string>,
  status: ItemStatus,
  makeId: MakeId,
): OutputItem[] {
  const message = completion.choices[0]?.message;
  if (!message) return [];
  const items: OutputItem[] = [];
  const text = typeof message.content === 'string' ? message.content : '';
  if (text !== '') {
    items.push({
      type: 'message',
      id: makeId('msg'),
      status,
      role: 'assistant',
      content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
    });
  } else if (typeof message.refusal === 'string' && message.refusal !== '') {
    items.push({
      type: 'message',
      id: makeId('msg'),
      status,
      role: 'assistant',
      content: [{ type: 'refusal', refusal: message.refusal }],
    });
  }
  for (const call of message.tool_calls ?? []) items.push(toolCallItem(call, custom, status, makeId));
  return items;
}

/** One chat tool call as a Responses output item. */
function toolCallItem(
  call: ChatToolCall,
  custom: ReadonlySet<string>,
  status: ItemStatus,
  makeId: MakeId,
): OutputItem {
  const name = call.function?.name ?? '';
  const args = call.function?.arguments ?? '';
  if (custom.has(name)) {
    return {
      type: 'custom_tool_call',
      id: makeId('ctc'),
      status,
      call_id: call.id,
      name,
      input: customInput(args),
    };
  }
  return { type: 'function_call', id: makeId('fc'), status, call_id: call.id, name, arguments: args };
}

/**
 * A custom tool's free-form input from the arguments of the function that stands for it: the
 * `input` string of `{"input": …}`; the arguments as they came when they are not that (a model
 * that wrote the input bare, or arguments cut short).
 */
export function customInput(args: string): string {
  try {
    const parsed = JSON.parse(args) as unknown;
    if (parsed && typeof parsed === 'object' && typeof (parsed as { input?: unknown }).input === 'string') {
      return (parsed as { input: string }).input;
    }
  } catch {}
  return args;
}

/** Reasoning tokens a chat usage reports (`completion_tokens_details.reasoning_tokens`), else 0. */
export function reasoningTokensOf(completion: ChatCompletion): number {
  const details = completion.usage?.completion_tokens_details as { reasoning_tokens?: unknown } | undefined;
  const tokens = details?.reasoning_tokens;
  return typeof tokens === 'number' && Number.isInteger(tokens) && tokens >= 0 ? tokens : 0;
}
