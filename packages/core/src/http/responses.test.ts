import { describe, expect, it } from 'vitest';
import { type JsonResponseMaker, jsonResponse } from './responses.js';

describe('jsonResponse', () => {
  it('makes an ordinary Response by default, with its Content-Type, Content-Length and headers', async () => {
    const built = jsonResponse({ ok: true }, 201, { 'X-Gateway-Request-Id': 'req_1' });
    expect(Object.getPrototypeOf(built)).toBe(Response.prototype);
    expect(built.status).toBe(201);
    expect(built.headers.get('x-gateway-request-id')).toBe('req_1');
    expect(built.headers.get('content-type')).toBe('application/json');
    expect(built.headers.get('content-length')).toBe('11');
    expect(await built.json()).toEqual({ ok: true });
  });

  it('hands the bytes, status and headers to the maker it is given', async () => {
    const seen: string[] = [];
    const make: JsonResponseMaker = (bytes, status, headers) => {
      seen.push(`${status} ${headers.get('content-length')} ${new TextDecoder().decode(bytes)}`);
      return new Response(bytes, { status, headers });
    };
    const built = jsonResponse({ b: 'é' }, 202, undefined, make);
    expect(seen).toEqual(['202 10 {"b":"é"}']);
    expect(await built.text()).toBe('{"b":"é"}');
  });
});
