import type { LedgerEntry, Storage } from '@tollgate/core';
import { expect, vi } from 'vitest';
import { type ApiResponse, call } from './http.js';
import { fetchGatewayAt } from './in-process-origins.js';
import type { MockReply, MockUpstream } from './mock-upstream.js';
import { fixtureWireBody, readFixture, sseEventsOf } from './wire-fixtures.js';

/** A recorded JSON body (a fixture file, or a path inside one, e.g. the cached-tokens wrapper). */
export function fixtureJson<T = Record<string, unknown>>(name: string): T {
  return JSON.parse(readFixture(name)) as T;
}

/** The second recorded OpenAI body of the cached-tokens wrapper (prompt 10122, 9984 of them cached). */
export function cachedTokensBody(): Record<string, unknown> {
  const wrapper = fixtureJson<{ attempts: { rawResponseBody: Record<string, unknown> }[] }>(
    'openai-chat-completion-cached-tokens.recorded.json',
  );
  return wrapper.attempts[1]!.rawResponseBody;
}

/** A minimal OpenAI chat completion an upstream answers with: one choice, `content`, its token counts. */
export function openaiCompletion(
  content: string,
  usage: { prompt_tokens: number; completion_tokens: number },
  model = 'm-1',
): Record<string, unknown> {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion',
    created: 1,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
  };
}

/** A mock reply replaying a recorded JSON body. */
export function jsonReply(body: unknown, status = 200): MockReply {
  return { kind: 'json', status, body };
}

/** A mock reply replaying a recorded stream event by event. */
export function sseReply(
  fixture: string,
  options: { breakAfter?: number; holdAfter?: number; gapMs?: number } = {},
): MockReply {
  return { kind: 'sse', events: sseEventsOf(fixtureWireBody(fixture)), ...options };
}

/**
 * Drops every connection the mock upstream has open, as a provider whose connection breaks while it
 * holds a stream (`holdAfter`). Used where the exact part delivered before a break matters:
 * `breakAfter` destroys the socket in the same tick as the write before it, and Node discards
 * writes still corked in that tick, so that last event (with no `gapMs`: every byte, the status line
 * included) never leaves the mock. Cutting a held stream after the client has seen its chunks is exact.
 */
export function cutUpstreamConnections(mock: MockUpstream): void {
  mock.cutConnections();
}

/**
 * The pre-flight's prompt estimate (product.md "Decisions"): ⌈ASCII characters / 4⌉ plus one per
 * non-ASCII character, over the serialised messages and tools. Tests use it to state what an
 * estimate-based charge must be.
 */
export function promptEstimate(messages: unknown[], tools?: unknown[]): number {
  const text = JSON.stringify(messages) + (tools ? JSON.stringify(tools) : '');
  const nonAscii = [...text].reduce((n, ch) => n + (ch.charCodeAt(0) < 0x80 ? 0 : ch.length), 0);
  return Math.ceil((text.length - nonAscii) / 4) + nonAscii;
}

/** `POST /v1/chat/completions` as raw fetch (in-process for an in-process gateway's origin), for reading the bytes of a stream. */
export function postChat(
  url: string,
  key: string,
  body: unknown,
  init: { signal?: AbortSignal; headers?: Record<string, string> } = {},
): Promise<Response> {
  return fetchGatewayAt(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', ...init.headers },
    body: JSON.stringify(body),
    signal: init.signal,
  });
}

/** `GET /v1/generation?id=` of the caller's account. */
export function getGeneration(url: string, key: string, requestId: string): Promise<ApiResponse> {
  return call(url, `/v1/generation?id=${encodeURIComponent(requestId)}`, { key });
}

/** Polls `GET /v1/generation` until the request has settled (its record no longer `in_progress`), then returns the record. */
// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary response shapes.
export async function settledGeneration(url: string, key: string, requestId: string): Promise<any> {
  return vi.waitFor(
    async () => {
      const response = await getGeneration(url, key, requestId);
      expect(response.status, response.text).toBe(200);
      // The hold writes the record `in_progress`: settled is when the settle has replaced it.
      expect(response.body.data.status).not.toBe('in_progress');
      return response.body.data;
    },
    { timeout: 10_000, interval: 25 },
  );
}

/** The account's `charge` ledger entries. */
export async function chargesOf(storage: Storage, accountId: string): Promise<LedgerEntry[]> {
  return (await storage.listLedgerEntries(accountId)).filter((entry) => entry.kind === 'charge');
}

/** The account's ledger entries that carry `requestId`. */
export async function entriesFor(
  storage: Storage,
  accountId: string,
  requestId: string,
): Promise<LedgerEntry[]> {
  return (await storage.listLedgerEntries(accountId)).filter((entry) => entry.requestId === requestId);
}

/** A cost in micros as the six-decimal USD string of `X-Gateway-Cost-Usd` and error messages. */
export function usd6(micros: number): string {
  return `${Math.floor(micros / 1_000_000)}.${String(micros % 1_000_000).padStart(6, '0')}`;
}
