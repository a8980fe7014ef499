import { describe, expect, it } from 'vitest';
import { createGateway } from '../gateway.js';
import type { Storage } from '../storage/types.js';
import { buildCatalogue } from './catalogue.js';
import { parseGatewayConfig } from './config-schema.js';

// The model routes under test are public: nothing reaches storage.
const storage = {} as Storage;
const catalogue = buildCatalogue(
  parseGatewayConfig({
    providers: {
      keyed: { format: 'openai', base_url: 'http://127.0.0.1:9/v1', api_key: 'sk-upstream-test' },
    },
    models: [
      {
        id: 'acme/fast',
        name: 'Acme Fast',
        context_length: 128000,
        max_output_tokens: 4096,
        capabilities: { tools: true },
        endpoints: [
          {
            provider: 'keyed',
            upstream_model: 'fast-1',
            pricing: { prompt: '0.15', completion: '0.60', cached_prompt: '0.075' },
          },
        ],
      },
      {
        id: 'other/v1.5:free',
        max_output_tokens: 1000,
        endpoints: [{ provider: 'keyed', upstream_model: 'k-1', pricing: { prompt: '3', completion: '15' } }],
      },
    ],
  }),
  {},
);
const gateway = createGateway(storage, catalogue, { logger: { info() {}, warn() {}, error() {} } });

const get = (path: string, headers: Record<string, string> = {}) =>
  gateway.fetch(new Request(`http://gateway.test${path}`, { headers }));

async function listed(): Promise<{ id: string }[]> {
  return ((await (await get('/v1/models')).json()) as { data: { id: string }[] }).data;
}

describe('GET /v1/models/{vendor}/{model}', () => {
  it('answers the row GET /v1/models lists for the model, without a key', async () => {
    const rows = await listed();
    expect(rows.length).toBe(2);
    for (const row of rows) {
      const response = await get(`/v1/models/${row.id}`);
      expect(response.status, row.id).toBe(200);
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      expect(await response.json()).toEqual(row);
    }
  });

  it('takes the id as one segment with the slash percent-encoded, as the OpenAI SDK sends it', async () => {
    const [fast] = await listed();
    for (const path of ['/v1/models/acme%2Ffast', '/v1/models/acme%2ffast', '/v1/models/acme/fast']) {
      const response = await get(path);
      expect(response.status, path).toBe(200);
      expect(await response.json()).toEqual(fast);
    }
    const encoded = await get(`/v1/models/${encodeURIComponent('other/v1.5:free')}`);
    expect(await encoded.json()).toMatchObject({ id: 'other/v1.5:free', object: 'model', owned_by: 'other' });
  });

  it('ignores an Authorization header: the catalogue is public', async () => {
    const response = await get('/v1/models/acme/fast', { Authorization: 'Bearer not-a-key' });
    expect(response.status).toBe(200);
  });

  it.each(['/v1/models/acme/no-such-model', '/v1/models/acme%2Fno-such-model', '/v1/models/no-slash'])(
    '%s → 404 model_not_found in the envelope',
    async (path) => {
      const response = await get(path);
      expect(response.status).toBe(404);
      const body = (await response.json()) as { error: Record<string, unknown> };
      expect(Object.keys(body)).toEqual(['error']);
      expect(body.error).toMatchObject({ code: 'model_not_found', type: expect.any(String) });
      expect(body.error.request_id).toBe(response.headers.get('x-gateway-request-id'));
    },
  );
});
