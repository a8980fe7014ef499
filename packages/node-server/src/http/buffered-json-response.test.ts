import { jsonResponse } from '@tollgate/core';
import { describe, expect, it } from 'vitest';
import { bufferedJsonResponse, unreadJsonBody } from './buffered-json-response.js';

/** A JSON answer as the gateway `serve` builds makes it. */
const buffered = (body: unknown, status?: number, headers?: HeadersInit) =>
  jsonResponse(body, status, headers, bufferedJsonResponse);

describe('unreadJsonBody', () => {
  it('gives the bytes a JSON response was built from, the same its stream yields', async () => {
    const response = buffered({ answer: 'é', n: 1 }, 201);
    const bytes = unreadJsonBody(response);

    expect(new TextDecoder().decode(bytes)).toBe('{"answer":"é","n":1}');
    expect(response.headers.get('content-length')).toBe(String(bytes?.byteLength));
    expect(new Uint8Array(await response.clone().arrayBuffer())).toEqual(bytes);
  });

  it('gives nothing once the body was read, nor for a response built any other way', async () => {
    const read = buffered({ a: 1 });
    await read.text();

    expect(unreadJsonBody(read)).toBeUndefined();
    expect(unreadJsonBody(new Response('{"a":1}'))).toBeUndefined();
  });
});

describe('bufferedJsonResponse', () => {
  it('reads like any response: body stream, text, json, clone, and bodyUsed once read', async () => {
    const streamed = buffered({ a: [1, 2] }, 202, { 'X-Extra': 'yes' });
    expect(streamed.status).toBe(202);
    expect(streamed.headers.get('x-extra')).toBe('yes');
    expect(streamed.headers.get('content-type')).toBe('application/json');
    expect(streamed.bodyUsed).toBe(false);
    const reader = streamed.body!.getReader();
    let text = '';
    for (let piece = await reader.read(); !piece.done; piece = await reader.read()) {
      text += new TextDecoder().decode(piece.value);
    }
    expect(text).toBe('{"a":[1,2]}');
    expect(streamed.bodyUsed).toBe(true);
    expect(unreadJsonBody(streamed)).toBeUndefined();

    const read = buffered({ b: 'é' });
    expect(await read.clone().json()).toEqual({ b: 'é' });
    expect(unreadJsonBody(read)).toBeDefined();
    expect(await read.text()).toBe('{"b":"é"}');
    await expect(read.text()).rejects.toThrow(TypeError);
  });

  it('a clone made after the body stream was made reads the body too, and so does the original', async () => {
    const response = buffered({ c: 3 }, 201, { 'X-Extra': 'yes' });
    expect(response.body).not.toBeNull();
    const copy = response.clone();
    expect(copy.status).toBe(201);
    expect(copy.headers.get('x-extra')).toBe('yes');
    expect(await copy.text()).toBe('{"c":3}');
    expect(await response.text()).toBe('{"c":3}');
    await expect(Promise.resolve().then(() => response.clone())).rejects.toThrow(TypeError);
  });
});
