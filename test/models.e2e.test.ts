import OpenAI from 'openai';
import { expect, it } from 'vitest';
import { call } from './helpers/http.js';
import { describeOnEachStorage } from './helpers/test-gateway.js';

describeOnEachStorage('GET /v1/models/{vendor}/{model} through the OpenAI SDK', (gw) => {
  const client = (apiKey: string) => new OpenAI({ apiKey, baseURL: `${gw().url}/v1`, maxRetries: 0 });

  it("models.retrieve('vendor/model') answers the row models.list() lists", async () => {
    const { inferenceKey } = await gw().newTenant();
    const listed = (await call(gw().url, '/v1/models')).body.data;
    const { data: model, response } = await client(inferenceKey).models.retrieve('acme/fast').withResponse();
    // The SDK sends the id as one segment: `/v1/models/acme%2Ffast`.
    expect(new URL(response.url).pathname).toBe('/v1/models/acme%2Ffast');
    expect(model).toEqual(listed[0]);
    expect(model).toMatchObject({ id: 'acme/fast', object: 'model', owned_by: 'acme' });
  });

  it('an unknown model → NotFoundError carrying the model_not_found envelope', async () => {
    const { inferenceKey } = await gw().newTenant();
    const error = await client(inferenceKey)
      .models.retrieve('acme/no-such-model')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect((error as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found');
  });
});
