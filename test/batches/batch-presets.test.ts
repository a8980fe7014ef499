import type { GatewayConfigInput, Storage } from '@tollgate/core';
import { createTestGateway, type TestGateway } from '@tollgate/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { openaiCompletion } from '../helpers/chat-wire.js';

const config: GatewayConfigInput = {
  providers: {
    primary: { format: 'openai', base_url: 'https://primary.example/v1', api_key_env: 'PRIMARY_KEY' },
  },
  models: [
    {
      id: 'acme/chat',
      max_output_tokens: 100,
      endpoints: [
        { provider: 'primary', upstream_model: 'chat-1', pricing: { prompt: '2', completion: '8' } },
      ],
    },
  ],
};

/** The store's preset reads made while a batch is checked: those before the batch is stored. */
function countPresetReadsBeforeCreate(storage: Storage) {
  const reads = { beforeCreate: 0, created: false };
  const counted = Object.create(storage) as Storage;
  counted.getPreset = (accountId, name) => {
    if (!reads.created) reads.beforeCreate++;
    return storage.getPreset(accountId, name);
  };
  counted.createBatch = (input) => {
    reads.created = true;
    return storage.createBatch(input);
  };
  return { counted, reads };
}

describe("a new batch's items go through the features' resolve stage", () => {
  let gw: TestGateway | undefined;
  afterEach(async () => {
    await gw?.close();
  });

  it('a preset named by every item is read once for the batch, and merged into each item', async () => {
    let reads = { beforeCreate: 0, created: false };
    gw = await createTestGateway(config, {
      gateway: { serverSecret: 'batch-presets-secret-0123456789abcdef' },
      wrapStorage: (storage) => {
        const wrapped = countPresetReadsBeforeCreate(storage);
        reads = wrapped.reads;
        return wrapped.counted;
      },
    });
    // The worker runs the items as soon as they are stored.
    gw.upstream('primary').always(
      200,
      openaiCompletion('ok', { prompt_tokens: 1, completion_tokens: 1 }, 'chat-1'),
    );
    const preset = await gw.fetch(
      new Request('http://tollgate.test/v1/presets', {
        method: 'POST',
        headers: { authorization: `Bearer ${gw.provisioningKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'house', config: { model: 'acme/chat' } }),
      }),
    );
    expect(preset.status, await preset.clone().text()).toBe(201);
    const requests = Array.from({ length: 40 }, (_, i) => ({
      custom_id: `item-${i}`,
      body:
        i % 2
          ? { preset: 'house', messages: [{ role: 'user', content: 'hi' }] }
          : { model: '@preset/house', messages: [{ role: 'user', content: 'hi' }] },
    }));
    const created = await gw.request('/v1/batches', { endpoint: '/v1/chat/completions', requests });
    expect(created.status, await created.clone().text()).toBe(200);
    expect(reads).toEqual({ beforeCreate: 1, created: true });
  });

  it('an item naming a preset the account lacks refuses the batch, naming the item', async () => {
    gw = await createTestGateway(config, {
      gateway: { serverSecret: 'batch-presets-secret-0123456789abcdef' },
    });
    const requests = [
      { custom_id: 'a', body: { model: 'acme/chat', messages: [{ role: 'user', content: 'hi' }] } },
      { custom_id: 'b', body: { preset: 'nope', messages: [{ role: 'user', content: 'hi' }] } },
    ];
    const refused = await gw.request('/v1/batches', { endpoint: '/v1/chat/completions', requests });
    expect(refused.status).toBe(400);
    const body = (await refused.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('invalid_request');
    expect(body.error.message).toMatch(/^requests\[1\]: .*preset "nope"/);
  });
});
