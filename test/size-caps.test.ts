import { type GatewayConfigInput, parseGatewayConfig } from '@tollgate/core';
import { createTestGateway, type TestGateway } from '@tollgate/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openaiCompletion } from './helpers/chat-wire.js';

// biome-ignore lint/suspicious/noExplicitAny: answers are read as plain JSON.
type Json = any;
const MB = 1024 * 1024;

/**
 * Request size caps (product.md "Request size caps"): the whole body (default 10 MB) and one
 * attachment (default 5 MB), `413 payload_too_large` stating both figures in MB, authentication
 * first, a refusal record for an inference request, nothing sent upstream.
 */
describe('request size caps (in-process gateway, the defaults)', () => {
  let gw: TestGateway;
  const upstreamCalls = () => gw.upstream('main').calls.length;

  beforeAll(async () => {
    const config: GatewayConfigInput = {
      providers: { main: { format: 'openai', base_url: 'http://upstream.test/v1', api_key: 'sk-main' } },
      models: [
        {
          id: 'acme/vision',
          max_output_tokens: 100,
          endpoints: [{ provider: 'main', upstream_model: 'v-1', pricing: { prompt: '1', completion: '2' } }],
        },
      ],
    };
    expect(parseGatewayConfig(config).limits).toEqual({ max_request_mb: 10, max_attachment_mb: 5 });
    gw = await createTestGateway(config);
    gw.upstream('main').always(
      200,
      openaiCompletion('a picture', { prompt_tokens: 10, completion_tokens: 2 }, 'v-1'),
    );
  });

  afterAll(() => gw?.close());

  beforeEach(() => {
    gw.upstream('main').calls.length = 0;
  });

  const post = (body: string, key: string | null = gw.key) =>
    gw.fetch(
      new Request('http://gateway.test/v1/chat/completions', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(key && { authorization: `Bearer ${key}` }) },
        body,
      }),
    );
  const withImage = (base64Chars: number) =>
    JSON.stringify({
      model: 'acme/vision',
      max_tokens: 5,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${'A'.repeat(base64Chars)}` } },
          ],
        },
      ],
    });

  it('an attachment over 5 MB → 413 naming both figures, a refusal record, nothing sent upstream', async () => {
    const response = await post(withImage(6 * MB));
    expect(response.status).toBe(413);
    const body = (await response.json()) as Json;
    expect(body.error.code).toBe('payload_too_large');
    expect(body.error.message).toMatch(/^Attachment is 6(\.\d+)? MB; the limit is 5 MB\.$/);
    const record = await gw.storage.getRequestRecord(
      gw.accountId,
      response.headers.get('x-gateway-request-id')!,
    );
    expect(record).toMatchObject({
      status: 'refused',
      httpStatus: 413,
      errorCode: 'payload_too_large',
      costMicros: 0,
    });
    expect(upstreamCalls()).toBe(0);
  });

  it('an attachment under the cap is served', async () => {
    const response = await post(withImage(4 * MB));
    expect(response.status).toBe(200);
    expect(upstreamCalls()).toBe(1);
  });

  it('a body over 10 MB → 413 "Request body is … MB; the limit is 10 MB." with a refusal record', async () => {
    const response = await post(withImage(11 * MB));
    expect(response.status).toBe(413);
    const body = (await response.json()) as Json;
    expect(body.error.message).toMatch(/^Request body is (over )?1[01](\.\d+)? MB; the limit is 10 MB\.$/);
    const record = await gw.storage.getRequestRecord(
      gw.accountId,
      response.headers.get('x-gateway-request-id')!,
    );
    expect(record).toMatchObject({ status: 'refused', errorCode: 'payload_too_large' });
  });

  it('authentication comes first: no key and a body over the cap → 401', async () => {
    const response = await post(withImage(11 * MB), null);
    expect(response.status).toBe(401);
  });
});
