import type { z } from 'zod';
import type { CatalogueProvider } from '../catalogue/catalogue.js';
import { describeSchemaError } from './describe-schema-error.js';
import type { HttpResponse } from './http-client.js';
import type { CallOptions } from './provider-adapter.js';
import { sendUpstream, type UpstreamChannel, type UpstreamPost } from './send-upstream.js';
import { networkFailure, UpstreamError } from './upstream-error.js';

/** A 2xx JSON answer: the JSON exactly as parsed (to pass on), and the same checked by its schema. */
interface UpstreamJson<T> {
  json: unknown;
  data: T;
}

/**
 * Reads a 2xx body as JSON and checks it with `schema`, the same way for every wire format. A body
 * that breaks off while being read → `UpstreamError('network')` (the abort itself when `signal`
 * aborted). A body that is not JSON, or fails its schema → `unreadableAnswer` (http 502): the
 * provider answered, but not with anything usable, so the caller treats it like an upstream 5xx.
 */
async function readUpstreamJson<T>(
  channel: UpstreamChannel,
  response: HttpResponse,
  schema: z.ZodType<T>,
  provider: CatalogueProvider,
  signal: AbortSignal,
): Promise<UpstreamJson<T>> {
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    throw networkFailure(error, signal, channel.dialect.brokenBodyMessage(provider, error));
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw unreadableAnswer(provider, 'not JSON');
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw unreadableAnswer(provider, describeSchemaError(parsed.error));
  return { json, data: parsed.data };
}

/** `sendUpstream`, then `readUpstreamJson` of the answer: one JSON call, start to end. */
export async function postUpstreamJson<T>(
  channel: UpstreamChannel,
  post: UpstreamPost,
  schema: z.ZodType<T>,
  call: CallOptions,
): Promise<UpstreamJson<T>> {
  const response = await sendUpstream(channel, post, call);
  return readUpstreamJson(channel, response, schema, post.provider, call.signal);
}

/**
 * A 2xx answer the gateway cannot use: `UpstreamError('http', '<provider>: unreadable answer (…)',
 * 502)`. `detail` says what was wrong with it and never quotes it.
 */
export function unreadableAnswer(provider: CatalogueProvider, detail: string): UpstreamError {
  return new UpstreamError('http', `${provider.id}: unreadable answer (${detail})`, 502);
}
