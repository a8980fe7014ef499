import { describe, expect, it } from 'vitest';
import { ClientClosedError } from '../errors/gateway-error.js';
import { readCappedBody } from './read-json-body.js';

const tooLarge = (size: number, atLeast: boolean) => new Error(`too large: ${size}${atLeast ? '+' : ''}`);
const post = (body: BodyInit, headers: Record<string, string> = {}) =>
  new Request('http://gateway.test/v1/x', { method: 'POST', body, headers });

describe('readCappedBody', () => {
  it('reads a body whose declared length is within the cap whole, without touching its stream', async () => {
    const bytes = new TextEncoder().encode('{"a":"é"}');
    const request = {
      headers: new Headers({ 'content-length': String(bytes.byteLength) }),
      arrayBuffer: async () => bytes.slice().buffer,
      get body(): never {
        throw new Error('the stream was touched');
      },
    } as unknown as Request;
    expect(await readCappedBody(request, 100, tooLarge)).toEqual(bytes);
  });

  it('refuses a declared length over the cap before reading anything', async () => {
    await expect(readCappedBody(post('x'.repeat(20)), 10, tooLarge)).rejects.toThrow('too large: 20');
  });

  it('refuses a request made in-process that carries more than it declares', async () => {
    const lying = post('x'.repeat(20), { 'content-length': '3' });
    await expect(readCappedBody(lying, 10, tooLarge)).rejects.toThrow('too large: 20');
  });

  it('streams a body of undeclared length, refusing it as soon as it passes the cap', async () => {
    const chunks = (n: number) =>
      new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < n; i++) controller.enqueue(new Uint8Array(4));
          controller.close();
        },
      });
    const streamed = (n: number) =>
      new Request('http://gateway.test/', { method: 'POST', body: chunks(n), duplex: 'half' } as RequestInit);
    expect(await readCappedBody(streamed(2), 10, tooLarge)).toEqual(new Uint8Array(8));
    await expect(readCappedBody(streamed(5), 10, tooLarge)).rejects.toThrow('too large: 12+');
  });

  it('a declared body the client never finished sending is a ClientClosedError', async () => {
    const request = {
      headers: new Headers({ 'content-length': '10' }),
      arrayBuffer: () => Promise.reject(new Error('socket hang up')),
    } as unknown as Request;
    await expect(readCappedBody(request, 100, tooLarge)).rejects.toBeInstanceOf(ClientClosedError);
  });

  it('no body at all is null', async () => {
    expect(await readCappedBody(new Request('http://gateway.test/'), 10, tooLarge)).toBeNull();
  });
});
