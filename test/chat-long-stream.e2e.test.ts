import { expect, it, vi } from 'vitest';
import { describeChatOnEachStorage, UPSTREAM } from './helpers/chat-gateway.js';
import { postChat, settledGeneration, sseReply } from './helpers/chat-wire.js';
import { SseReader } from './helpers/sse.js';

/** A hold lives this long unless the request holding it keeps it alive. */
const TTL_MS = 300;

describeChatOnEachStorage(
  'a stream that outlives its hold TTL',
  (gw) => {
    it('keeps its credit hold live until it settles, then releases it', async () => {
      const { storage, mock } = gw();
      const tenant = await gw().newTenant();
      // Three events arrive, then the upstream holds the rest for several TTLs.
      mock.enqueue(
        UPSTREAM.openai,
        sseReply('openai-chat-stream-text-include-usage.chunks.txt', { holdAfter: 3 }),
      );
      const response = await postChat(gw().url, tenant.inferenceKey, {
        model: 'acme/gpt-4o',
        messages: [{ role: 'user', content: 'Invent a holiday.' }],
        stream: true,
        max_tokens: 50,
      });
      const reader = new SseReader(response);
      expect(await reader.readUntil(() => reader.content() === '**Holiday')).toBe(true);

      const started = Date.now();
      // Past three TTLs the original hold would have expired; it must still be live.
      await vi.waitFor(() => expect(Date.now() - started).toBeGreaterThan(3 * TTL_MS), {
        timeout: 5_000,
        interval: 50,
      });
      const live = await storage.listReservations(tenant.account.id, Date.now());
      expect(live).toHaveLength(1);
      expect(live[0]!.expiresAt).toBeGreaterThan(Date.now());

      mock.release();
      expect(await reader.readAll()).toContain('data: [DONE]');
      const requestId = response.headers.get('x-gateway-request-id')!;
      expect((await settledGeneration(gw().url, tenant.inferenceKey, requestId)).status).toBe('success');
      expect(await storage.listReservations(tenant.account.id, Date.now() + 60_000)).toEqual([]);
    });
  },
  { reservationTtlMs: TTL_MS },
);
