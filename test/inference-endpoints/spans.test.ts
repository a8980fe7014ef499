import type { TestGateway } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inferenceConfig, ScriptedUpstream, startKitGateway } from '../helpers/inference-wire.js';
import { InstantClock } from '../helpers/instant-clock.js';
import { type OpenedStorage, openSqlite } from '../helpers/storage-variants.js';
import { createTenant } from '../helpers/tenant.js';
import { inputOf, testConfig } from '../helpers/test-config.js';

/** The inference catalogue plus a provider standing in for the OTLP collector (no model uses it). */
const spansConfig = testConfig({
  ...inputOf(inferenceConfig),
  providers: {
    ...inputOf(inferenceConfig).providers,
    collector: { format: 'openai', base_url: 'http://collector.test', api_key: 'none' },
  },
});

/** Every span attribute of every exported span, as `{key: value}` per span. */
function spansIn(bodies: string[]): Record<string, unknown>[] {
  const spans: Record<string, unknown>[] = [];
  for (const body of bodies) {
    const json = JSON.parse(body) as {
      resourceSpans: {
        scopeSpans: { spans: { name: string; attributes: { key: string; value: object }[] }[] }[];
      }[];
    };
    for (const rs of json.resourceSpans)
      for (const ss of rs.scopeSpans)
        for (const span of ss.spans) {
          const attributes: Record<string, unknown> = { name: span.name };
          for (const a of span.attributes) attributes[a.key] = Object.values(a.value)[0];
          spans.push(attributes);
        }
  }
  return spans;
}

describe('spans of the new endpoints (GenAI operation names)', () => {
  const collected: string[] = [];
  const upstream = new ScriptedUpstream(spansConfig);
  let opened: OpenedStorage;
  let kit: TestGateway<InstantClock>;
  let key: string;

  beforeAll(async () => {
    opened = await openSqlite();
    kit = await startKitGateway(opened.storage, spansConfig, upstream, new InstantClock(), {
      otlp: { endpoint: 'http://collector.test' },
    });
    kit.upstream('collector').always((collector, call) => {
      collected.push(JSON.stringify(call.body));
      collector.reply(200, {});
    });
    key = (await createTenant(opened.storage, { creditMicros: 10_000_000 })).inferenceKey;
  });
  afterAll(async () => {
    await opened.storage.close();
    await opened.dispose();
  });

  it('names each operation as the GenAI conventions do, the refusals included', async () => {
    const post = (path: string, body: unknown) =>
      kit.fetch(
        new Request(`http://gateway.test${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
          body: JSON.stringify(body),
        }),
      );
    expect((await post('/v1/embeddings', { model: 'acme/embed', input: 'hello' })).status).toBe(200);
    expect((await post('/v1/images/generations', { model: 'acme/image', prompt: 'a cat' })).status).toBe(200);
    expect(
      (await post('/v1/rerank', { model: 'acme/rerank', query: 'q', documents: ['a', 'b'] })).status,
    ).toBe(200);
    expect((await post('/v1/embeddings', { model: 'acme/chat', input: 'x' })).status).toBe(400);
    await kit.close();

    const spans = spansIn(collected);
    const byName = (name: string) => spans.filter((s) => s.name === name);
    expect(byName('embeddings acme/embed')[0]).toMatchObject({
      'gen_ai.operation.name': 'embeddings',
      'gen_ai.provider.name': 'p1',
      'gateway.status_code': 200,
    });
    expect(byName('generate_content acme/image')[0]).toMatchObject({
      'gen_ai.operation.name': 'generate_content',
    });
    expect(byName('rerank acme/rerank')[0]).toMatchObject({ 'gen_ai.operation.name': 'rerank' });
    expect(byName('embeddings acme/chat')[0]).toMatchObject({
      'gen_ai.operation.name': 'embeddings',
      'error.type': 'invalid_request',
    });
    // Neither the input nor the prompt reaches a span.
    expect(collected.join('')).not.toContain('a cat');
  });
});
