import { describe, expect, it } from 'vitest';
import { jsonResponse, unreadJsonBody } from './responses.js';

describe('unreadJsonBody', () => {
  it('gives the bytes a JSON response was built from, the same its stream yields', async () => {
    const response = jsonResponse({ answer: 'é', n: 1 }, 201);
    const bytes = unreadJsonBody(response);

    expect(new TextDecoder().decode(bytes)).toBe('{"answer":"é","n":1}');
    expect(response.headers.get('content-length')).toBe(String(bytes?.byteLength));
    expect(new Uint8Array(await response.clone().arrayBuffer())).toEqual(bytes);
  });

  it('gives nothing once the body was read, nor for a response built any other way', async () => {
    const read = jsonResponse({ a: 1 });
    await read.text();

    expect(unreadJsonBody(read)).toBeUndefined();
    expect(unreadJsonBody(new Response('{"a":1}'))).toBeUndefined();
  });
});
