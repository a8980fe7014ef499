import OpenAI from 'openai';
import { describe, expect, it, vi } from 'vitest';
import { describeChatOnEachStorage, UPSTREAM } from './helpers/chat-gateway.js';
import { STREAM_CASES, toolDeclaration } from './helpers/chat-stream-cases.js';
import {
  cutUpstreamConnections,
  entriesFor,
  postChat,
  promptEstimate,
  settledGeneration,
  sseReply,
} from './helpers/chat-wire.js';
import { REQUEST_ID } from './helpers/http.js';
import { contentOf, dataChunks, parseSse, SseReader } from './helpers/sse.js';

// biome-ignore lint/suspicious/noExplicitAny: chunks are read as plain JSON.
type Json = any;

const HOLIDAY = [{ role: 'user' as const, content: 'Invent a holiday.' }];
// '[{"role":"user","content":"Invent a holiday."}]' is 47 characters → ⌈47 / 4⌉ = 12 prompt tokens.
const HOLIDAY_PROMPT_TOKENS = 12;

describeChatOnEachStorage('chat completions, streaming', (gw) => {
  describe('every recorded stream through the official SDK stream helper', () => {
    for (const c of STREAM_CASES) {
      const tools = c.toolNames.length > 0 ? c.toolNames.map(toolDeclaration) : undefined;

      it(`${c.fixture}: finalChatCompletion() is the recorded message (${c.toolCalls.length} tool calls, finish_reason ${c.finishReason})`, async () => {
        const { mock } = gw();
        const tenant = await gw().newTenant();
        mock.enqueue(c.path, sseReply(c.fixture));

        const stream = gw()
          .client(tenant.inferenceKey)
          .chat.completions.stream({
            model: c.model,
            messages: [{ role: 'user', content: c.prompt ?? 'Go.' }],
            ...(tools && { tools }),
          });
        const final = await stream.finalChatCompletion();

        const choice = final.choices[0]!;
        expect(final.choices).toHaveLength(1);
        expect(choice.finish_reason).toBe(c.finishReason);
        expect(choice.message.role).toBe('assistant');
        expect(choice.message.content ?? null).toBe(c.content);
        if (c.toolCalls.length === 0) {
          expect(choice.message.tool_calls ?? []).toEqual([]);
        } else {
          expect(
            (choice.message.tool_calls as OpenAI.Chat.ChatCompletionMessageFunctionToolCall[]).map((t) => ({
              id: t.id,
              type: t.type,
              name: t.function.name,
              arguments: t.function.arguments,
            })),
          ).toEqual(c.toolCalls.map((t) => ({ ...t, type: 'function' })));
        }
        expect(final.model).toBe(c.model);
        // The terminal chunk's usage and cost land on the accumulated completion.
        expect(final.usage).toMatchObject({
          prompt_tokens: c.usage.prompt_tokens,
          completion_tokens: c.usage.completion_tokens,
        });
        expect((final as Json).gateway).toMatchObject({ cost_micros: c.costMicros, model: c.model });

        // The upstream was asked for a stream (OpenAI format: with usage reporting).
        expect(mock.received).toHaveLength(1);
        const upstream = mock.received[0]!.body;
        expect(upstream.stream).toBe(true);
        if (c.format === 'openai') {
          expect(upstream.stream_options).toMatchObject({ include_usage: true });
        } else {
          expect(upstream).not.toHaveProperty('stream_options');
        }
      });

      it(`${c.fixture}: the raw SSE ends with a terminal chunk carrying usage and gateway.cost_micros (${c.costMicros}), then [DONE]; no cost header`, async () => {
        const { mock, url, storage } = gw();
        const tenant = await gw().newTenant();
        mock.enqueue(c.path, sseReply(c.fixture));

        const response = await postChat(url, tenant.inferenceKey, {
          model: c.model,
          messages: [{ role: 'user', content: c.prompt ?? 'Go.' }],
          stream: true,
          ...(tools && { tools }),
        });
        expect(response.status).toBe(200);
        expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
        expect(response.headers.get('x-gateway-cost-usd')).toBeNull();
        const requestId = response.headers.get('x-gateway-request-id');
        expect(requestId).toMatch(REQUEST_ID);
        const text = await response.text();
        const events = parseSse(text);

        expect(
          events.filter((e) => e.event !== null),
          'no named (error) event',
        ).toEqual([]);
        expect(events.at(-1)!.data).toBe('[DONE]');
        expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
        const chunks = dataChunks(events);
        const terminal = chunks.at(-1);
        for (const chunk of chunks) {
          expect(chunk.object).toBe('chat.completion.chunk');
          expect(chunk.model).toBe(c.model);
        }
        // Usage is reported once, on the terminal chunk.
        expect(chunks.slice(0, -1).filter((chunk) => chunk.usage != null)).toEqual([]);
        expect(terminal.usage).toMatchObject({
          prompt_tokens: c.usage.prompt_tokens,
          completion_tokens: c.usage.completion_tokens,
          total_tokens: c.usage.prompt_tokens + c.usage.completion_tokens,
        });
        expect(terminal.usage.prompt_tokens_details?.cached_tokens ?? 0).toBe(c.usage.cached_tokens);
        expect(terminal.choices[0].finish_reason).toBe(c.finishReason);
        expect(terminal.gateway).toMatchObject({
          request_id: requestId,
          cost_micros: c.costMicros,
          cost_usd: c.costMicros / 1_000_000,
          model: c.model,
          attempts: 1,
        });
        expect(contentOf(events) || null).toBe(c.content);

        const ledger = await entriesFor(storage, tenant.account.id, requestId!);
        expect(ledger.map((e) => e.amountMicros)).toEqual([-c.costMicros]);
      });
    }
  });

  describe('forwarding', () => {
    it('OpenAI format: the client receives the first content chunks while the upstream still holds the rest', async () => {
      const { mock, url } = gw();
      const tenant = await gw().newTenant();
      // Events 0–3: role, "**", "Holiday", " Name"; the mock holds before event 4.
      mock.enqueue(
        UPSTREAM.openai,
        sseReply('openai-chat-stream-text-include-usage.chunks.txt', { holdAfter: 4 }),
      );

      const response = await postChat(url, tenant.inferenceKey, {
        model: 'acme/gpt',
        messages: HOLIDAY,
        stream: true,
      });
      expect(response.status).toBe(200);
      const reader = new SseReader(response);
      const gotFirst = await reader.readUntil(() => reader.content() === '**Holiday Name');
      expect(gotFirst, 'the chunks sent before the hold arrived').toBe(true);
      expect(reader.done).toBe(false);
      expect(reader.text).not.toContain('[DONE]');

      mock.release();
      const events = parseSse(await reader.readAll());
      expect(contentOf(events)).toMatch(/^\*\*Holiday Name:\*\* Harmony Day/);
      expect(events.at(-1)!.data).toBe('[DONE]');
      expect(dataChunks(events).at(-1).gateway.cost_micros).toBe(134);
    });

    it('Anthropic format: the client receives the text while the upstream still holds the tool call', async () => {
      const { mock, url } = gw();
      const tenant = await gw().newTenant();
      // Events 0–4: message_start, text block start, ping, "I", "'ll check …"; held before the block stop.
      mock.enqueue(UPSTREAM.anthropic, sseReply('anthropic-stream-text-then-tool-use.sse', { holdAfter: 5 }));

      const response = await postChat(url, tenant.inferenceKey, {
        model: 'acme/claude',
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        tools: [toolDeclaration('get_weather')],
        stream: true,
      });
      const reader = new SseReader(response);
      const expected = "I'll check the current weather in Paris for you.";
      expect(await reader.readUntil(() => reader.content() === expected)).toBe(true);
      expect(reader.text).not.toContain('tool_calls');

      mock.release();
      const chunks = dataChunks(parseSse(await reader.readAll()));
      expect(chunks.at(-1).gateway.cost_micros).toBe(2106);
    });
  });

  describe('a stream that breaks mid-answer', () => {
    /** Opens a stream whose upstream holds after `holdAfter` events, reads until `seen`, then drops the upstream connection. */
    async function breakAfterSeen(
      body: Record<string, unknown>,
      path: string,
      fixture: string,
      holdAfter: number,
      seen: string,
    ) {
      const { mock, url } = gw();
      const tenant = await gw().newTenant();
      mock.enqueue(path, sseReply(fixture, { holdAfter }));
      const response = await postChat(url, tenant.inferenceKey, { ...body, stream: true });
      expect(response.status).toBe(200);
      const requestId = response.headers.get('x-gateway-request-id')!;
      const reader = new SseReader(response);
      expect(await reader.readUntil(() => reader.content() === seen), 'the chunks before the break').toBe(
        true,
      );
      cutUpstreamConnections(mock);
      const events = parseSse(await reader.readAll());
      return { tenant, requestId, events };
    }

    it('breakAfter: the delivered chunks, then event: error with the envelope, a terminal chunk with usage and no finish_reason, then [DONE]; charged for the delivered text', async () => {
      const { mock, url, storage } = gw();
      const tenant = await gw().newTenant();
      // The mock writes events 10 ms apart and drops the connection after them; Node discards the
      // write made in the same tick as the drop, so the last event before the break never leaves.
      mock.enqueue(
        UPSTREAM.openai,
        sseReply('openai-chat-stream-text-include-usage.chunks.txt', { breakAfter: 6, gapMs: 10 }),
      );

      const response = await postChat(url, tenant.inferenceKey, {
        model: 'acme/gpt-4o',
        messages: HOLIDAY,
        stream: true,
        max_tokens: 100,
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('x-gateway-cost-usd')).toBeNull();
      const requestId = response.headers.get('x-gateway-request-id')!;
      const events = parseSse(await response.text());

      const errorAt = events.findIndex((e) => e.event === 'error');
      expect(errorAt, 'an error event after the delivered chunks').toBeGreaterThan(0);
      const delivered = contentOf(events.slice(0, errorAt));
      expect(delivered.length).toBeGreaterThan(0);
      const fullText = STREAM_CASES.find(
        (c) => c.fixture === 'openai-chat-stream-text-include-usage.chunks.txt',
      )!.content!;
      expect(fullText.startsWith(delivered), 'the delivered text is a prefix of the recorded one').toBe(true);
      const envelope = JSON.parse(events[errorAt]!.data);
      expect(Object.keys(envelope)).toEqual(['error']);
      expect(envelope.error).toEqual({
        message: expect.any(String),
        type: 'api_error',
        code: 'upstream_error',
        request_id: requestId,
      });
      // After the error: the terminal chunk, then [DONE], and nothing else.
      expect(events.slice(errorAt + 1).map((e) => e.event)).toEqual([null, null]);
      expect(events.at(-1)!.data).toBe('[DONE]');
      const terminal = JSON.parse(events[errorAt + 1]!.data);
      expect(terminal.object).toBe('chat.completion.chunk');
      expect(terminal.choices[0].finish_reason).toBeNull();

      // No usage arrived (OpenAI sends it last): prompt = the pre-flight estimate, completion ≈ 4
      // characters per token over the text delivered; acme/gpt-4o costs 2.50 / 10 per million.
      const completionTokens = Math.ceil(delivered.length / 4);
      const cost = Math.ceil((HOLIDAY_PROMPT_TOKENS * 2_500_000 + completionTokens * 10_000_000) / 1_000_000);
      expect(terminal.usage).toMatchObject({
        prompt_tokens: HOLIDAY_PROMPT_TOKENS,
        completion_tokens: completionTokens,
      });
      expect(terminal.gateway).toMatchObject({ request_id: requestId, cost_micros: cost });

      const generation = await settledGeneration(url, tenant.inferenceKey, requestId);
      expect(generation).toMatchObject({
        status: 'broken_stream',
        cost_micros: cost,
        finish_reason: null,
        stream: true,
      });
      const ledger = await entriesFor(storage, tenant.account.id, requestId);
      expect(ledger).toHaveLength(1);
      expect(ledger[0]).toMatchObject({ kind: 'charge', amountMicros: -cost });
      expect(mock.received).toHaveLength(1);
    });

    it('OpenAI format, no usage yet: charged the prompt estimate plus ⌈delivered characters / 4⌉, exactly one ledger entry', async () => {
      const { url, storage } = gw();
      const { tenant, requestId, events } = await breakAfterSeen(
        { model: 'acme/gpt-4o', messages: HOLIDAY, max_tokens: 100 },
        UPSTREAM.openai,
        'openai-chat-stream-text-include-usage.chunks.txt',
        5, // role, "**", "Holiday", " Name", ":**"
        '**Holiday Name:**',
      );
      const errorAt = events.findIndex((e) => e.event === 'error');
      expect(contentOf(events.slice(0, errorAt))).toBe('**Holiday Name:**');
      expect(JSON.parse(events[errorAt]!.data).error).toMatchObject({
        code: 'upstream_error',
        request_id: requestId,
      });
      expect(events.at(-1)!.data).toBe('[DONE]');
      const terminal = JSON.parse(events[errorAt + 1]!.data);
      expect(terminal.choices[0].finish_reason).toBeNull();

      // Prompt: '[{"role":"user","content":"Invent a holiday."}]' = 47 characters → ⌈47 / 4⌉ = 12.
      // Completion: "**Holiday Name:**" = 17 characters → ⌈17 / 4⌉ = 5.
      // acme/gpt-4o: 12 × 2.5 = 30 + 5 × 10 = 50 → 80 micros.
      expect(promptEstimate(HOLIDAY)).toBe(HOLIDAY_PROMPT_TOKENS);
      expect(terminal.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 });
      expect(terminal.gateway).toMatchObject({ request_id: requestId, cost_micros: 80, cost_usd: 0.00008 });

      const generation = await settledGeneration(url, tenant.inferenceKey, requestId);
      expect(generation).toMatchObject({
        status: 'broken_stream',
        cost_micros: 80,
        finish_reason: null,
        usage: { prompt_tokens: 12, completion_tokens: 5 },
      });
      const ledger = await entriesFor(storage, tenant.account.id, requestId);
      expect(ledger).toHaveLength(1);
      expect(ledger[0]).toMatchObject({ kind: 'charge', amountMicros: -80, requestId });
      expect(await storage.listReservations(tenant.account.id, Date.now())).toEqual([]);
    });

    it('the estimate of a broken stream is bounded by max_tokens', async () => {
      const { storage } = gw();
      const { tenant, requestId, events } = await breakAfterSeen(
        { model: 'acme/gpt-4o', messages: HOLIDAY, max_tokens: 2 },
        UPSTREAM.openai,
        'openai-chat-stream-text-include-usage.chunks.txt',
        5,
        '**Holiday Name:**',
      );
      const terminal = dataChunks(events).at(-1);
      // ⌈17 / 4⌉ = 5 tokens delivered, bounded by max_tokens 2: 12 × 2.5 = 30 + 2 × 10 = 20 → 50 micros.
      expect(terminal.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 2 });
      expect(terminal.gateway.cost_micros).toBe(50);
      const ledger = await entriesFor(storage, tenant.account.id, requestId);
      expect(ledger.map((e) => e.amountMicros)).toEqual([-50]);
    });

    it("Anthropic format: the provider's partial usage gives the prompt; the delivered text gives the completion", async () => {
      const { url, storage } = gw();
      const text = "I'll check the current weather in Paris for you.";
      const { tenant, requestId, events } = await breakAfterSeen(
        { model: 'acme/claude', messages: [{ role: 'user', content: 'Weather in Paris?' }] },
        UPSTREAM.anthropic,
        'anthropic-stream-text-then-tool-use.sse',
        5, // message_start (input_tokens 377), text block start, ping, "I", "'ll check …"
        text,
      );
      expect(events.map((e) => e.event).filter(Boolean)).toEqual(['error']);
      expect(contentOf(events)).toBe(text);
      const terminal = dataChunks(events).at(-1);
      expect(terminal.choices[0].finish_reason).toBeNull();
      // Prompt 377 (message_start); completion ⌈48 characters / 4⌉ = 12 (more than the 1 reported so far).
      // acme/claude: 377 × 3 = 1131 + 12 × 15 = 180 → 1311 micros.
      expect(terminal.usage).toMatchObject({ prompt_tokens: 377, completion_tokens: 12 });
      expect(terminal.gateway.cost_micros).toBe(1311);

      const generation = await settledGeneration(url, tenant.inferenceKey, requestId);
      expect(generation).toMatchObject({ status: 'broken_stream', cost_micros: 1311 });
      expect((await entriesFor(storage, tenant.account.id, requestId)).map((e) => e.amountMicros)).toEqual([
        -1311,
      ]);
    });

    it('the official SDK surfaces the error event as an APIError carrying the envelope', async () => {
      const { mock } = gw();
      const tenant = await gw().newTenant();
      mock.enqueue(
        UPSTREAM.openai,
        sseReply('openai-chat-stream-text-include-usage.chunks.txt', { breakAfter: 6, gapMs: 10 }),
      );

      const stream = gw()
        .client(tenant.inferenceKey)
        .chat.completions.stream({ model: 'acme/gpt', messages: HOLIDAY });
      const failure = await stream.finalChatCompletion().then(
        () => null,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(OpenAI.APIError);
      expect(failure).toMatchObject({ code: 'upstream_error', type: 'api_error' });
    });
  });

  describe('a client that goes away', () => {
    /** A streamed request from a fresh tenant, answered by a recorded stream the mock holds after `holdAfter` events. */
    async function openHeldStream(holdAfter: number) {
      const tenant = await gw().newTenant();
      gw().mock.enqueue(
        UPSTREAM.openai,
        sseReply('openai-chat-stream-text-include-usage.chunks.txt', { holdAfter }),
      );
      const controller = new AbortController();
      const response = await postChat(
        gw().url,
        tenant.inferenceKey,
        { model: 'acme/gpt-4o', messages: HOLIDAY, stream: true, max_tokens: 50 },
        { signal: controller.signal },
      );
      return { tenant, controller, response, requestId: response.headers.get('x-gateway-request-id')! };
    }

    /** Waits until the mock saw the gateway hang up, then returns the request's settled record. */
    async function settledAfterAbort(inferenceKey: string, requestId: string) {
      await vi.waitFor(() => expect(gw().mock.clientAborts).toBe(1), { timeout: 10_000, interval: 20 });
      return settledGeneration(gw().url, inferenceKey, requestId);
    }

    it('mid-stream: the upstream connection is closed and the request settles as client_closed, charged for the delivered tokens', async () => {
      const { storage } = gw();
      // Events 0–2 (role, "**", "Holiday") arrive, then the mock holds the rest.
      const { tenant, controller, response, requestId } = await openHeldStream(3);
      const reader = new SseReader(response);
      expect(await reader.readUntil(() => reader.content() === '**Holiday')).toBe(true);
      controller.abort();

      const generation = await settledAfterAbort(tenant.inferenceKey, requestId);
      // Prompt 12 (estimate); completion ⌈"**Holiday" 9 characters / 4⌉ = 3.
      // 12 × 2.5 = 30 + 3 × 10 = 30 → 60 micros.
      expect(generation).toMatchObject({
        status: 'client_closed',
        error: { code: 'client_closed' },
        cost_micros: 60,
        usage: { prompt_tokens: 12, completion_tokens: 3 },
      });
      const ledger = await entriesFor(storage, tenant.account.id, requestId);
      expect(ledger).toHaveLength(1);
      expect(ledger[0]).toMatchObject({ kind: 'charge', amountMicros: -60 });
      expect(await storage.listReservations(tenant.account.id, Date.now())).toEqual([]);
    });

    it('before reading any chunk: charged the reserved ceiling (prompt estimate + max_tokens at the route price)', async () => {
      const { storage } = gw();
      // Only the first event (the role chunk, no text) is sent; the mock holds the rest.
      const { tenant, controller, response, requestId } = await openHeldStream(1);
      expect(response.status).toBe(200);
      // The stream is opened and never read.
      controller.abort();

      const generation = await settledAfterAbort(tenant.inferenceKey, requestId);
      // The ceiling it was reserved against: 12 × 2.5 = 30 + max_tokens 50 × 10 = 500 → 530 micros.
      expect(generation).toMatchObject({
        status: 'client_closed',
        error: { code: 'client_closed' },
        cost_micros: 530,
      });
      expect((await entriesFor(storage, tenant.account.id, requestId)).map((e) => e.amountMicros)).toEqual([
        -530,
      ]);
      expect(await storage.listReservations(tenant.account.id, Date.now())).toEqual([]);
    });
  });
});
