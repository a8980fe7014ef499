import type { ChunkReading } from '../../pipeline/inference-operation.js';
import type { ResponsesStreamEvent } from '../../providers/provider-adapter.js';

type Json = Record<string, unknown>;

/**
 * What a native Response (or a cached one) comes to for the record: `stop` or `tool_calls` when
 * completed, `length` when cut at `max_output_tokens`, `content_filter` when filtered, else its
 * status (`failed`, `cancelled`).
 */
export function nativeFinishReason(response: Json): string | null {
  const status = response.status;
  if (status === 'completed') {
    const output = Array.isArray(response.output) ? (response.output as Json[]) : [];
    return output.some((item) => isCall(item?.type)) ? 'tool_calls' : 'stop';
  }
  if (status === 'incomplete') {
    const reason = (response.incomplete_details as { reason?: unknown } | null)?.reason;
    return reason === 'max_output_tokens'
      ? 'length'
      : reason === 'content_filter'
        ? 'content_filter'
        : 'length';
  }
  return typeof status === 'string' ? status : null;
}

/** Characters of generated output in a Response: message text, refusals, tool arguments and inputs, reasoning. */
export function nativeOutputCharacters(response: Json): number {
  let chars = 0;
  for (const item of Array.isArray(response.output) ? (response.output as Json[]) : []) {
    if (!item || typeof item !== 'object') continue;
    for (const field of ['arguments', 'input'] as const) {
      if (typeof item[field] === 'string') chars += (item[field] as string).length;
    }
    for (const list of [item.content, item.summary]) {
      if (!Array.isArray(list)) continue;
      for (const part of list as Json[]) {
        for (const field of ['text', 'refusal'] as const) {
          if (typeof part?.[field] === 'string') chars += (part[field] as string).length;
        }
      }
    }
  }
  return chars;
}

/** Whether a Response produced anything (the `zero_completion` waiver is for one that did not). */
export function nativeProducedOutput(response: Json): boolean {
  const output = Array.isArray(response.output) ? (response.output as Json[]) : [];
  return output.some((item) => item?.type !== 'message') || nativeOutputCharacters(response) > 0;
}

/** What one native event carries for the meter: the characters of a `*.delta`, a tool call begun, the end. */
export function readNativeEvent(event: ResponsesStreamEvent): ChunkReading {
  const chars = event.type.endsWith('.delta') && typeof event.delta === 'string' ? event.delta.length : 0;
  const item = event.type === 'response.output_item.added' ? (event.item as Json | undefined) : undefined;
  const terminal = event.type === 'response.completed' || event.type === 'response.incomplete';
  return {
    chars,
    produced: chars > 0 || (item !== undefined && item?.type !== 'message'),
    finishReason: terminal ? nativeFinishReason((event.response ?? {}) as Json) : null,
  };
}

/** A call the client must answer (a hosted tool's call is answered upstream). */
const isCall = (type: unknown) => type === 'function_call' || type === 'custom_tool_call';
