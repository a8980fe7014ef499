import type { ResponsesStreamEvent } from '../../providers/provider-adapter.js';

type Json = Record<string, unknown>;

/**
 * A whole Response (a cached answer) as the events a stream of it would have sent, numbered from 0:
 * `response.created` and `response.in_progress` with no output yet; per item `output_item.added`,
 * its content told in one delta each (a message's text parts, a function call's arguments, a
 * custom tool call's input), `output_item.done`; then the terminal event (`response.completed`, or
 * `response.incomplete`) with the whole Response. Items of other types (reasoning, hosted tool
 * calls) are added and done whole.
 */
export function responseAsEvents(response: Json): ResponsesStreamEvent[] {
  const events: ResponsesStreamEvent[] = [];
  const push = (type: string, fields: Json) =>
    events.push({ type, sequence_number: events.length, ...fields });
  const opening = { ...response, status: 'in_progress', output: [], usage: null, completed_at: null };
  push('response.created', { response: opening });
  push('response.in_progress', { response: opening });
  const output = Array.isArray(response.output) ? (response.output as Json[]) : [];
  output.forEach((item, index) => {
    const at = { item_id: item.id, output_index: index };
    switch (item.type) {
      case 'message': {
        const parts = Array.isArray(item.content) ? (item.content as Json[]) : [];
        push('response.output_item.added', {
          output_index: index,
          item: { ...item, status: 'in_progress', content: [] },
        });
        parts.forEach((part, content_index) => {
          const text = part.type === 'refusal' ? 'refusal' : 'text';
          const empty = { ...part, [text]: '' };
          push('response.content_part.added', { ...at, content_index, part: empty });
          const kind = part.type === 'refusal' ? 'refusal' : 'output_text';
          push(`response.${kind}.delta`, { ...at, content_index, delta: part[text] ?? '' });
          push(`response.${kind}.done`, { ...at, content_index, [text]: part[text] ?? '' });
          push('response.content_part.done', { ...at, content_index, part });
        });
        break;
      }
      case 'function_call':
        push('response.output_item.added', {
          output_index: index,
          item: { ...item, status: 'in_progress', arguments: '' },
        });
        push('response.function_call_arguments.delta', { ...at, delta: item.arguments ?? '' });
        push('response.function_call_arguments.done', { ...at, name: item.name, arguments: item.arguments });
        break;
      case 'custom_tool_call':
        push('response.output_item.added', {
          output_index: index,
          item: { ...item, status: 'in_progress', input: '' },
        });
        push('response.custom_tool_call_input.delta', { ...at, delta: item.input ?? '' });
        push('response.custom_tool_call_input.done', { ...at, input: item.input });
        break;
      default:
        push('response.output_item.added', { output_index: index, item });
    }
    push('response.output_item.done', { output_index: index, item });
  });
  push(response.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response });
  return events;
}
