import type { ChatRequest } from '../chat-types.js';
import type { HttpClient, HttpRequestInit } from '../http-client.js';
import type { UpstreamTarget } from '../provider-adapter.js';
import { type ScriptedHttpReply, scriptedHttpResponse } from '../scripted-http.js';

/* A scripted HttpClient and the request and target the provider tests share; no network. */

type Reply = ScriptedHttpReply;

/** An `HttpClient` that records each call and answers with `reply`, or throws when given an Error. */
export function fakeHttp(reply: Reply | Error) {
  const calls: { url: string; init: HttpRequestInit }[] = [];
  let discards = 0;
  const http: HttpClient = {
    async request(url, init) {
      calls.push({ url, init });
      if (reply instanceof Error) throw reply;
      return scriptedHttpResponse(reply, () => {
        discards++;
      });
    },
  };
  return { http, calls, discards: () => discards };
}

export const bytes = (text: string) => new TextEncoder().encode(text);

export const target: UpstreamTarget = {
  provider: {
    id: 'openai',
    format: 'openai',
    baseUrl: 'https://api.example.com/v1',
    apiKey: 'sk-test',
    headers: { 'OpenAI-Organization': 'org-1' },
    timeoutMs: null,
    streamIdleTimeoutMs: 60_000,
  },
  upstreamModel: 'gpt-4o-mini-2024-07-18',
  maxOutputTokens: 16384,
};

export const request: ChatRequest = {
  model: 'openai/gpt-4o-mini',
  messages: [{ role: 'user', content: 'Say ok' }],
  metadata: { team: 'search' },
  seed: 7,
};

/** Call options with a signal nobody aborts. */
export const call = () => ({ signal: new AbortController().signal });

/** The error a promise rejects with; fails the test when it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}
