import { describe, expect, it, vi } from 'vitest';
import { ApiError, createApiClient } from './api-client.js';

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

describe('createApiClient', () => {
  it('createApiClient - sends the bearer key to the same-origin path', async () => {
    const fetch = vi.fn(async () => json(200, { data: { id: 'k' } }));
    const api = createApiClient('gw_test_abc', { fetch });
    expect(await api.get('/v1/key')).toEqual({ data: { id: 'k' } });
    const [url, init] = fetch.mock.calls[0] as unknown as [string, RequestInit];
    expect(url).toBe('/v1/key');
    expect(init.headers).toMatchObject({ Authorization: 'Bearer gw_test_abc' });
  });

  it('createApiClient - sends JSON bodies with their content type', async () => {
    const fetch = vi.fn(async () => json(201, { data: {} }));
    await createApiClient('k', { fetch }).send('POST', '/v1/keys', { name: 'a' });
    const [, init] = fetch.mock.calls[0] as unknown as [string, RequestInit];
    expect(init.body).toBe('{"name":"a"}');
    expect(init.headers).toMatchObject({ 'Content-Type': 'application/json' });
  });

  it('createApiClient - throws the envelope message and reports a 401', async () => {
    const onUnauthorized = vi.fn();
    const fetch = vi.fn(async () => json(401, { error: { code: 'unauthorized', message: 'Key revoked.' } }));
    const api = createApiClient('k', { fetch, onUnauthorized });
    await expect(api.get('/v1/keys')).rejects.toEqual(new ApiError(401, 'Key revoked.'));
    expect(onUnauthorized).toHaveBeenCalledWith('Key revoked.');
  });

  it('createApiClient - refuses paths outside /v1', async () => {
    const api = createApiClient('k', { fetch: vi.fn() });
    await expect(api.get('https://elsewhere.example/v1/key')).rejects.toThrow('not an API path');
  });
});
