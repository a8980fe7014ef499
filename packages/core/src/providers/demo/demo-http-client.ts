import { newId } from '../../ids.js';
import type { HttpClient, HttpResponse } from '../http-client.js';
import { demoEmbeddings } from './demo-embeddings.js';
import { demoImages } from './demo-images.js';
import { type DemoJsonAnswer, invalidRequest } from './demo-json-answer.js';
import { demoAnswer, demoChunks, demoCompletion } from './demo-reply.js';
import { demoRerank } from './demo-rerank.js';

const encoder = new TextEncoder();

/** The demo upstream's endpoints other than chat, each a JSON body in and a JSON answer out. */
const JSON_ENDPOINTS: Record<
  string,
  (body: Record<string, unknown>, now: () => number) => Promise<DemoJsonAnswer>
> = {
  '/embeddings': async (body) => demoEmbeddings(body),
  '/images/generations': demoImages,
  '/rerank': async (body) => demoRerank(body),
};

/**
 * An `HttpClient` that is the demo upstream itself: it answers, in-process and as an
 * OpenAI-compatible server would, `POST …/chat/completions` (JSON, or server-sent events ending in
 * `data: [DONE]`, with the replies of `demo-reply.ts`), `…/embeddings`, `…/images/generations` and
 * `…/rerank` (Jina's shape). Nothing leaves the process. An aborted `signal` rejects the call, or
 * breaks the stream, with the signal's reason, as a real connection would.
 */
export function createDemoHttpClient(now: () => number = Date.now): HttpClient {
  return {
    async request(url, init) {
      init.signal?.throwIfAborted();
      const path = new URL(url, 'http://demo.invalid').pathname;
      const endpoint = Object.keys(JSON_ENDPOINTS).find((suffix) => path.endsWith(suffix));
      if (init.method !== 'POST' || (!endpoint && !path.endsWith('/chat/completions'))) {
        return jsonResponse({
          status: 404,
          body: notFound(
            `the demo provider serves POST /chat/completions, /embeddings, /images/generations and /rerank, not ${init.method} ${url}`,
          ),
        });
      }
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(init.body ?? '') as Record<string, unknown>;
      } catch {
        return jsonResponse(invalidRequest('the request body is not JSON'));
      }
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        return jsonResponse(invalidRequest('the request body is not a JSON object'));
      }
      if (endpoint) return jsonResponse(await JSON_ENDPOINTS[endpoint]!(body, now));
      return chatResponse(body, now, init.signal);
    },
  };
}

function chatResponse(body: Record<string, unknown>, now: () => number, signal?: AbortSignal): HttpResponse {
  if (!Array.isArray(body.messages))
    return jsonResponse(invalidRequest('the request needs a messages array'));
  const stamp = { id: newId('chatcmpl-demo'), created: Math.floor(now() / 1000) };
  const answer = demoAnswer(body, newId('call_demo'));
  if (body.stream !== true) return jsonResponse({ status: 200, body: demoCompletion(body, answer, stamp) });
  const events = demoChunks(body, answer, stamp).map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`);
  events.push('data: [DONE]\n\n');
  return {
    status: 200,
    header: (name) => (name.toLowerCase() === 'content-type' ? 'text/event-stream' : null),
    text: async () => events.join(''),
    async *body() {
      for (const event of events) {
        signal?.throwIfAborted();
        yield encoder.encode(event);
      }
    },
    discard: async () => {},
  };
}

function jsonResponse({ status, body }: DemoJsonAnswer): HttpResponse {
  const text = JSON.stringify(body);
  return {
    status,
    header: (name) => (name.toLowerCase() === 'content-type' ? 'application/json' : null),
    text: async () => text,
    async *body() {
      yield encoder.encode(text);
    },
    discard: async () => {},
  };
}

function notFound(message: string) {
  return { error: { message, type: 'invalid_request_error', code: 'not_found' } };
}
