import { readFileSync } from 'node:fs';

/** The recorded upstream replies, in the repository (`test/fixtures/wire`; see its README). */
const FIXTURES = new URL('../fixtures/wire/', import.meta.url);

/** A fixture file's bytes as text, exactly as recorded. */
export function readFixture(name: string): string {
  return readFileSync(new URL(name, FIXTURES), 'utf8');
}

/**
 * A recorded stream as the bytes a provider sends (fixtures README): `*.sse` as is;
 * `*.chunks.txt` rebuilt — Anthropic files as `event: <type>` + `data:` pairs with no `[DONE]`,
 * OpenAI-compatible files as `data:` lines followed by `data: [DONE]`.
 */
export function fixtureWireBody(name: string): string {
  const text = readFixture(name);
  if (name.endsWith('.sse')) return text;
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  if (name.startsWith('anthropic-')) {
    return lines.map((line) => `event: ${JSON.parse(line).type}\ndata: ${line}\n\n`).join('');
  }
  return `${lines.map((line) => `data: ${line}\n\n`).join('')}data: [DONE]\n\n`;
}

/** Splits a wire body into its SSE events (each ending in a blank line), for chunk-by-chunk replay. */
export function sseEventsOf(body: string): string[] {
  const events = body.split(/(?<=\n\n)/);
  return events.filter((e) => e.length > 0);
}
