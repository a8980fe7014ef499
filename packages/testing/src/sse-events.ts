import type { ProviderFormat } from '@tollgate/core';

/**
 * One event of a scripted stream: an object (sent as JSON), raw SSE text (sent as is), or an Error:
 * the connection breaks there, after what came before it.
 */
export type StreamEvent = string | Record<string, unknown> | Error;

const encoder = new TextEncoder();

/**
 * The events as the provider's own SSE wire: OpenAI-style `data: {json}` blocks ended by
 * `data: [DONE]` (unless `done` is false); Anthropic's `event: <type>` + `data: {json}` blocks. A
 * string event is written verbatim, so a test can send a comment, a torn block or its own framing.
 */
export function sseBlocks(
  format: ProviderFormat,
  events: readonly StreamEvent[],
  done: boolean,
): (Uint8Array | Error)[] {
  const blocks: (string | Error)[] = events.map((event) => {
    if (typeof event === 'string' || event instanceof Error) return event;
    const data = `data: ${JSON.stringify(event)}\n\n`;
    return format === 'anthropic' && typeof event.type === 'string' ? `event: ${event.type}\n${data}` : data;
  });
  const broken = events.some((event) => event instanceof Error);
  if (format !== 'anthropic' && done && !broken) blocks.push('data: [DONE]\n\n');
  return blocks.map((block) => (block instanceof Error ? block : encoder.encode(block)));
}
