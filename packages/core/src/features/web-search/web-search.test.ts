import { describe, expect, it } from 'vitest';
import { buildCatalogue } from '../../catalogue/catalogue.js';
import { parseGatewayConfig } from '../../catalogue/config-schema.js';
import { reportedCostMicros } from './search-cost.js';
import { insertAboveLastUser } from './search-results-message.js';
import { planWebSearch, readWebPlugin } from './web-plugin-request.js';

const chat = {
  id: 'acme/chat',
  max_output_tokens: 10,
  endpoints: [{ provider: 'p1', upstream_model: 'm', pricing: { prompt: '1', completion: '2' } }],
};

function catalogue(providers: Record<string, unknown>) {
  return buildCatalogue(
    parseGatewayConfig({
      providers: { p1: { format: 'openai', base_url: 'http://x/v1', api_key: 'k' }, ...providers },
      models: [chat],
    }),
    { EXA: 'from-env' },
  );
}

describe('reportedCostMicros', () => {
  it.each([
    [0.005, 5_000],
    [0.007, 7_000],
    [1.2, 1_200_000],
    [0, 0],
    [1e-7, 1],
    [0.0050001, 5_001],
    [0.1 + 0.2, 300_001],
  ])('%s USD → %s micros (exact, a part below a micro rounds up)', (usd, micros) => {
    expect(reportedCostMicros(usd)).toBe(micros);
  });

  it.each([-1, Number.NaN, Number.POSITIVE_INFINITY, '0.005', null, undefined])('%s → null', (value) => {
    expect(reportedCostMicros(value)).toBeNull();
  });
});

describe('web-search providers in the config', () => {
  it('parses price_per_search exactly and defaults it to 0.007', () => {
    const c = catalogue({
      a: { format: 'web-search', base_url: 'http://a/', api_key_env: 'EXA', price_per_search: '0.0125' },
      b: { format: 'web-search', base_url: 'http://b' },
    });
    expect(c.providers.get('a')).toMatchObject({
      apiKey: 'from-env',
      baseUrl: 'http://a',
      pricePerSearchMicros: 12_500,
    });
    expect(c.providers.get('b')?.pricePerSearchMicros).toBeUndefined();
  });

  it('is never a model route', () => {
    expect(() =>
      parseGatewayConfig({
        providers: { s: { format: 'web-search', base_url: 'http://s', api_key: 'k' } },
        models: [{ ...chat, endpoints: [{ ...chat.endpoints[0], provider: 's' }] }],
      }),
    ).toThrow(/cannot serve a chat model/);
  });

  it('plans on the first backend with a key, in config order', () => {
    const c = catalogue({
      off: { format: 'web-search', base_url: 'http://off', price_per_search: '1' },
      on: { format: 'web-search', base_url: 'http://on', api_key: 'k' },
      later: { format: 'web-search', base_url: 'http://later', api_key: 'k2' },
    });
    const plan = planWebSearch({ maxResults: 5, searchPrompt: null, query: 'q' }, c);
    expect(plan.backend.id).toBe('on');
    expect(plan.priceMicros).toBe(7_000);
  });
});

describe('readWebPlugin', () => {
  const c = catalogue({});
  const messages = [{ role: 'user', content: [{ type: 'text', text: 'news' }] }];

  it('reads `:online`, also before `:free`, and drops `plugins`', () => {
    expect(readWebPlugin({ model: 'acme/chat:online', messages }, c)).toMatchObject({
      body: { model: 'acme/chat' },
      plugin: { maxResults: 5, query: 'news' },
    });
    expect(readWebPlugin({ model: 'acme/chat:online:free', messages }, c)?.body.model).toBe('acme/chat:free');
    const read = readWebPlugin(
      { model: 'acme/chat', messages, plugins: [{ id: 'web', max_results: 10 }] },
      c,
    );
    expect(read?.body).not.toHaveProperty('plugins');
    expect(read?.plugin.maxResults).toBe(10);
    expect(readWebPlugin({ model: 'acme/chat', messages }, c)).toBeNull();
  });

  it('refuses what cannot run', () => {
    const read = (extra: Record<string, unknown>) => () =>
      readWebPlugin({ model: 'acme/chat', messages, ...extra }, c);
    expect(read({ plugins: [{ id: 'web', max_results: 0 }] })).toThrow(/max_results/);
    expect(read({ plugins: 'web' })).toThrow(/plugins/);
    expect(read({ plugins: [{ id: 'moderation' }] })).toThrow(/not available/);
    expect(read({ plugins: [{ id: 'web' }], messages: [{ role: 'system', content: 'x' }] })).toThrow(
      /no text/,
    );
  });
});

describe('insertAboveLastUser', () => {
  it('puts the message just above the last user message', () => {
    const roles = insertAboveLastUser(
      [{ role: 'user' }, { role: 'assistant' }, { role: 'user' }, { role: 'tool' }],
      { role: 'system' },
    ).map((m) => m.role);
    expect(roles).toEqual(['user', 'assistant', 'system', 'user', 'tool']);
  });
});
