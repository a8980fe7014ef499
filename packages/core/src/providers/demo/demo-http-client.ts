import { newId } from '../../ids.js';
import type { HttpClient, HttpResponse } from '../http-client.js';
import { demoAnswer, demoChunks, demoCompletion } from './demo-reply.js';

const encoder = new TextEncoder();

/**
 * An `HttpClient` that is the demo upstream itself: it answers `POST …/chat/completions` in-process,
 * as an OpenAI-compatible server would (JSON, or server-sent events ending in `data: [DONE]`), with
 * the replies of `demo-reply.ts`. Nothing leaves the process. An aborted `signal` rejects the call,
 * or breaks the stream, with the signal's reason, as a real connection would.
 */
export function createDemoHttpClient(now: () => number = Date.now): HttpClient {
  return {
    async request(url, init) {
      init.signal?.throwIfAborted();
      if (init.method !== 'POST' || !url.endsWith('/chat/completions')) {
        return errorResponse(
          404,
          `the demo provider serves only POST /chat/completions, not ${init.method} ${url}`,
        );
      }
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(init.body ?? '') as Record<string, unknown>;
      } catch {
        return errorResponse(400, 'the request body is not JSON');
      }
      if (typeof body !== 'object' || body === null || !Array.isArray(body.messages)) {
        return errorResponse(400, 'the request needs a messages array');
      }
      const stamp = { id: newId('chatcmpl-demo'), created: Math.floor(now() / 1000) };
      const answer = demoAnswer(body, newId('call_demo'));
      if (body.stream !== true) {
        return textResponse(200, 'application/json', JSON.stringify(demoCompletion(body, answer, stamp)));
      }
      const events = demoChunks(body, answer, stamp).map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`);
      events.push('data: [DONE]\n\n');
      return {
        status: 200,
        header: (name) => (name.toLowerCase() === 'content-type' ? 'text/event-stream' : null),
        text: async () => events.join(''),
        async *body() {
          for (const event of events) {
            init.signal?.throwIfAborted();
            yield encoder.encode(event);
          }
        },
        discard: async () => {},
      };
    },
  };
}

function textResponse(status: number, contentType: string, text: string): HttpResponse {
  return {
    status,
    header: (name) => (name.toLowerCase() === 'content-type' ? contentType : null),
    text: async () => text,
    async *body() {
      yield encoder.encode(text);
    },
    discard: async () => {},
  };
}

function errorResponse(status: number, message: string): HttpResponse {
  return textResponse(
    status,
    'application/json',
    JSON.stringify({ error: { message, type: 'invalid_request_error', code: null } }),
  );
}
