import { ERROR_CODES, type ErrorCode } from '@tollgate/core';
import { expect } from 'vitest';
import { fetchGatewayAt } from './in-process-origins.js';

export interface ApiResponse {
  status: number;
  headers: Headers;
  /** The parsed JSON body, or `undefined` when the body is empty or not JSON. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary response shapes.
  body: any;
  text: string;
}

export interface CallInit {
  method?: string;
  /** Sent as `Authorization: Bearer <key>`. */
  key?: string;
  /** Serialised as the JSON body. */
  json?: unknown;
  /** A raw body (wins over `json`). */
  body?: BodyInit;
  headers?: Record<string, string>;
}

/**
 * One request to the gateway under test: over loopback to a served gateway, straight to
 * `gateway.fetch` for an in-process one's origin (`fetchGatewayAt`), or through `send`.
 */
export async function call(
  baseUrl: string,
  path: string,
  init: CallInit = {},
  send: (url: URL, init: RequestInit) => Promise<Response> = fetchGatewayAt,
): Promise<ApiResponse> {
  const headers = new Headers(init.headers);
  if (init.key !== undefined) headers.set('Authorization', `Bearer ${init.key}`);
  let body: BodyInit | undefined = init.body;
  if (body === undefined && init.json !== undefined) {
    body = JSON.stringify(init.json);
    headers.set('Content-Type', 'application/json');
  }
  const response = await send(new URL(path, baseUrl), {
    method: init.method ?? (body === undefined ? 'GET' : 'POST'),
    headers,
    body,
    ...(body instanceof ReadableStream && { duplex: 'half' }),
  } as RequestInit);
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

export const REQUEST_ID = /^req_[0-9a-z]+$/;

/**
 * The spec's error envelope, exactly: `{error: {message, type, code, request_id}}` with the status
 * and type of `ERROR_CODES[code]`, and `X-Gateway-Request-Id` equal to `error.request_id`.
 */
export function expectError(response: ApiResponse, status: number, code: ErrorCode): void {
  const context = `${status} ${code}, got ${response.status} ${response.text}`;
  expect(response.status, context).toBe(status);
  expect(ERROR_CODES[code].status, `ERROR_CODES says ${code} is ${ERROR_CODES[code].status}`).toBe(status);
  expect(response.headers.get('content-type') ?? '', context).toMatch(/^application\/json/);
  expect(Object.keys(response.body ?? {}), context).toEqual(['error']);
  expect(Object.keys(response.body.error).sort(), context).toEqual(['code', 'message', 'request_id', 'type']);
  expect(response.body.error, context).toEqual({
    message: expect.any(String),
    type: ERROR_CODES[code].type,
    code,
    request_id: expect.stringMatching(REQUEST_ID),
  });
  expect(response.body.error.message.length, context).toBeGreaterThan(0);
  expect(response.headers.get('x-gateway-request-id'), context).toBe(response.body.error.request_id);
}

/**
 * Anthropic's error body, as the Messages wire answers every failure: exactly
 * `{type: "error", error: {type, message}, request_id}`, the message starting with the gateway's
 * code, and `request_id` equal to `X-Gateway-Request-Id`.
 */
export function expectAnthropicError(
  response: { status: number; headers: Headers; text: string },
  status: number,
  code: ErrorCode,
  type: string,
): void {
  const context = `${status} ${code}, got ${response.status} ${response.text}`;
  expect(response.status, context).toBe(status);
  expect(ERROR_CODES[code].status, `ERROR_CODES says ${code} is ${ERROR_CODES[code].status}`).toBe(status);
  expect(response.headers.get('content-type') ?? '', context).toMatch(/^application\/json/);
  expect(JSON.parse(response.text), context).toEqual({
    type: 'error',
    error: { type, message: expect.stringMatching(new RegExp(`^${code}: .+`)) },
    request_id: response.headers.get('x-gateway-request-id'),
  });
}

/** The comma-separated tokens of a header, lower-cased (`Access-Control-Allow-Headers` and friends). */
export function headerTokens(headers: Headers, name: string): string[] {
  return (headers.get(name) ?? '')
    .split(',')
    .map((token) => token.trim().toLowerCase())
    .filter(Boolean);
}
