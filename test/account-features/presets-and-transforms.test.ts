import { expect, it } from 'vitest';
import { accountFeaturesConfig, addPreset, chatBody } from '../helpers/account-features.js';
import {
  describeOnEachInferenceStorage,
  expectRefused,
  type Json,
  requestIdOf,
} from '../helpers/inference-wire.js';

/*
 * Presets on the request path (product.md "Presets"): `"model": "@preset/<name>"` or `"preset":
 * "<name>"`, merged shallowly with the request winning, the preset's `system` first, the record
 * carrying the name; an unknown preset (or another account's) is 404 not_found. And `middle-out`
 * (product.md "The middle-out transform"): whole messages dropped from the middle outward until the
 * estimate fits the model's context, reported in `gateway.transforms`.
 */

describeOnEachInferenceStorage(
  'Presets and transforms on the request path',
  (gw) => {
    it('"model": "@preset/<name>" takes the preset\'s model and parameters, its system message first; the record names the preset', async () => {
      const tenant = await gw().newTenant();
      await addPreset(gw(), tenant, {
        name: 'terse',
        config: { model: 'acme/chat-two', temperature: 0.2, max_tokens: 40, system: 'Be terse.' },
      });
      const response = await gw().post(
        '/v1/chat/completions',
        {
          model: '@preset/terse',
          max_tokens: 20,
          messages: [
            { role: 'system', content: 'Answer in English.' },
            { role: 'user', content: 'Hi' },
          ],
        },
        tenant.inferenceKey,
      );
      const body = (await response.json()) as Json;
      expect(response.status, JSON.stringify(body)).toBe(200);
      expect(body.gateway.model).toBe('acme/chat-two');
      const sent = gw().upstream.calls[0]!.body;
      expect(sent).toMatchObject({ model: 'gpt-4o-mini', temperature: 0.2, max_tokens: 20 });
      expect(sent.messages).toEqual([
        { role: 'system', content: 'Be terse.' },
        { role: 'system', content: 'Answer in English.' },
        { role: 'user', content: 'Hi' },
      ]);
      expect(sent).not.toHaveProperty('preset');
      expect(sent).not.toHaveProperty('system');
      const record = await gw().generation(requestIdOf(response), tenant.inferenceKey);
      expect(record).toMatchObject({ preset: 'terse', model: 'acme/chat-two' });
    });

    it('"preset": "<name>" beside a model: the request\'s model wins', async () => {
      const tenant = await gw().newTenant();
      await addPreset(gw(), tenant, { name: 'warm', config: { model: 'acme/chat-two', temperature: 1.5 } });
      const response = await gw().post(
        '/v1/chat/completions',
        chatBody({ preset: 'warm' }),
        tenant.inferenceKey,
      );
      const body = (await response.json()) as Json;
      expect(response.status, JSON.stringify(body)).toBe(200);
      expect(body.gateway.model).toBe('acme/chat');
      expect(gw().upstream.calls[0]!.body).toMatchObject({ model: 'gpt-4o-mini', temperature: 1.5 });
    });

    it('a preset applies to embeddings too', async () => {
      const tenant = await gw().newTenant();
      await addPreset(gw(), tenant, {
        name: 'small-vectors',
        config: { model: 'acme/embed', dimensions: 256 },
      });
      const response = await gw().post(
        '/v1/embeddings',
        { model: '@preset/small-vectors', input: 'hello' },
        tenant.inferenceKey,
      );
      expect(response.status, await response.clone().text()).toBe(200);
      expect(gw().upstream.calls[0]!.body).toMatchObject({ dimensions: 256, input: 'hello' });
    });

    it("an unknown preset, or another account's, is 404 not_found and a refusal on record", async () => {
      const owner = await gw().newTenant();
      await addPreset(gw(), owner, { name: 'private', config: { model: 'acme/chat' } });
      const other = await gw().newTenant();
      for (const model of ['@preset/missing', '@preset/private']) {
        const response = await gw().post('/v1/chat/completions', chatBody({ model }), other.inferenceKey);
        const { error, record } = await expectRefused(gw(), other, response, {
          status: 404,
          code: 'not_found',
          endpoint: 'chat.completions',
        });
        expect(error.message).toContain(model.slice('@preset/'.length));
        expect(record.requested_model ?? record.model).toBe(model);
      }
    });

    it('middle-out drops whole messages from the middle until the estimate fits, and reports it', async () => {
      const tenant = await gw().newTenant();
      const filler = 'x'.repeat(200);
      const messages = [
        { role: 'system', content: 'You are helpful.' },
        { role: 'user', content: 'first question' },
        ...Array.from({ length: 8 }, (_, i) => ({
          role: i % 2 ? 'user' : 'assistant',
          content: `${i} ${filler}`,
        })),
        { role: 'user', content: 'last question' },
      ];
      const response = await gw().post(
        '/v1/chat/completions',
        { model: 'acme/chat-small', messages, max_tokens: 50, transforms: ['middle-out'] },
        tenant.inferenceKey,
      );
      const body = (await response.json()) as Json;
      expect(response.status, JSON.stringify(body)).toBe(200);
      const sent = gw().upstream.calls[0]!.body.messages as Json[];
      const dropped = messages.length - sent.length;
      expect(dropped).toBeGreaterThan(0);
      expect(body.gateway.transforms).toEqual([{ id: 'middle-out', dropped_messages: dropped }]);
      expect(sent[0]).toEqual(messages[0]);
      expect(sent[1]).toEqual(messages[1]);
      expect(sent.at(-1)).toEqual(messages.at(-1));
      expect(JSON.stringify(sent).length / 4 + 50).toBeLessThanOrEqual(300);
      expect(gw().upstream.calls[0]!.body).not.toHaveProperty('transforms');
    });

    it('without the transform nothing is dropped and nothing is reported', async () => {
      const tenant = await gw().newTenant();
      const messages = Array.from({ length: 6 }, (_, i) => ({
        role: 'user',
        content: `${i} ${'y'.repeat(300)}`,
      }));
      const response = await gw().post(
        '/v1/chat/completions',
        { model: 'acme/chat-small', messages, max_tokens: 10 },
        tenant.inferenceKey,
      );
      const body = (await response.json()) as Json;
      expect(response.status, JSON.stringify(body)).toBe(200);
      expect(gw().upstream.calls[0]!.body.messages).toHaveLength(6);
      expect(body.gateway).not.toHaveProperty('transforms');
    });
  },
  accountFeaturesConfig,
);
