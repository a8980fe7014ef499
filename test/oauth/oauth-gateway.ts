import { createHash, randomBytes } from 'node:crypto';
import type { Gateway, Storage } from '@tollgate/core';
import { expect } from 'vitest';
import { demoOnlyConfig } from '../helpers/demo-config.js';
import { describeOnEachVariant, startGatewayUnderTest } from '../helpers/gateway-under-test.js';
import { type ApiResponse, type CallInit, call } from '../helpers/http.js';
import type { InstantClock } from '../helpers/instant-clock.js';
import {
  type OpenedStorage,
  type StorageVariant,
  storageVariantsWithPglite,
} from '../helpers/storage-variants.js';
import type { Tenant, TenantOptions } from '../helpers/tenant.js';

const config = demoOnlyConfig;

export const REDIRECT_URI = 'https://notes.example/oauth/callback';
export const OTHER_REDIRECT_URI = 'http://localhost:8788/cb?app=notes';

/** A registered client as `POST /v1/oauth/clients` answered it. */
export interface RegisteredClient {
  client_id: string;
  client_secret: string;
  name: string;
  redirect_uris: string[];
  created_at: string;
}

/** How a token request is sent: the body's encoding and, optionally, HTTP Basic client credentials. */
export interface TokenInit {
  /** Default `form` (`application/x-www-form-urlencoded`). */
  as?: 'form' | 'json';
  /** `[client_id, client_secret]` sent as `Authorization: Basic`, form-urlencoded first (RFC 6749 §2.3.1). */
  basic?: [string, string];
  headers?: Record<string, string>;
}

/** The gateway in-process over one storage, with OAuth shortcuts. */
export interface OAuthApi {
  gateway: Gateway;
  storage: Storage;
  opened: OpenedStorage;
  clock: InstantClock;
  newTenant(options?: TenantOptions): Promise<Tenant>;
  call(path: string, init?: CallInit): Promise<ApiResponse>;
  /** `POST /v1/oauth/clients` with a provisioning key; expects 201. */
  registerClient(
    key: string,
    body?: Partial<{ name: string; redirect_uris: string[] }>,
  ): Promise<RegisteredClient>;
  /** `POST /v1/oauth/authorize` with a key (the approver's). */
  authorize(key: string, body: Record<string, unknown>): Promise<ApiResponse>;
  /** `POST /v1/oauth/token` with these parameters. */
  token(params: Record<string, string>, init?: TokenInit): Promise<ApiResponse>;
  /** A chat completion on the demo model with `key`. */
  chat(key: string): Promise<ApiResponse>;
}

/** A PKCE pair: a 43-character verifier and its S256 challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** RFC 6749 §2.3.1 / Appendix B: `application/x-www-form-urlencoded` of one value. */
export function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}

/** An RFC 6749 §5.2 error answer: status, `{error, error_description}` only, and no caching. */
export function expectOAuthError(response: ApiResponse, status: number, error: string): void {
  const context = `${status} ${error}, got ${response.status} ${response.text}`;
  expect(response.status, context).toBe(status);
  expect(response.headers.get('content-type') ?? '', context).toMatch(/^application\/json/);
  expect(Object.keys(response.body ?? {}).sort(), context).toEqual(['error', 'error_description']);
  expect(response.body.error, context).toBe(error);
  expect(typeof response.body.error_description, context).toBe('string');
  expect(response.headers.get('cache-control'), context).toBe('no-store');
  expect(response.headers.get('x-gateway-request-id'), context).toMatch(/^req_[0-9a-z]+$/);
}

async function startOAuthApi(variant: StorageVariant): Promise<OAuthApi & { close(): Promise<void> }> {
  const gw = await startGatewayUnderTest({
    config,
    upstream: 'kit',
    open: () => variant.open(),
    gateway: { publicUrl: 'http://gateway.test', oauth: { approvePage: '/dashboard/authorize' } },
  });
  // Sent to the public URL the gateway names in its metadata; `gw.fetch` takes it in-process.
  const send = (path: string, init: CallInit = {}) => call('http://gateway.test', path, init, gw.fetch);
  return {
    gateway: gw.gateway,
    storage: gw.storage,
    opened: gw.opened,
    clock: gw.clock,
    newTenant: gw.newTenant,
    call: send,
    async registerClient(key, body = {}) {
      const response = await send('/v1/oauth/clients', {
        key,
        json: { name: 'Acme Notes', redirect_uris: [REDIRECT_URI, OTHER_REDIRECT_URI], ...body },
      });
      expect(response.status, response.text).toBe(201);
      return response.body as RegisteredClient;
    },
    authorize: (key, body) => send('/v1/oauth/authorize', { key, json: body }),
    token(params, init = {}) {
      const headers: Record<string, string> = { ...init.headers };
      if (init.basic) {
        const [id, secret] = init.basic;
        headers.authorization = `Basic ${btoa(`${formEncode(id)}:${formEncode(secret)}`)}`;
      }
      if (init.as === 'json') return send('/v1/oauth/token', { json: params, headers });
      headers['content-type'] ??= 'application/x-www-form-urlencoded';
      return send('/v1/oauth/token', { body: new URLSearchParams(params).toString(), headers });
    },
    chat: (key) =>
      send('/v1/chat/completions', {
        key,
        json: {
          model: 'demo/chat-small',
          messages: [{ role: 'user', content: 'Say hello.' }],
          max_tokens: 20,
        },
      }),
    close: () => gw.close(),
  };
}

/** Declares `body` once per storage variant, each with its own in-process gateway. */
export function describeOAuthApi(title: string, body: (api: () => OAuthApi) => void): void {
  describeOnEachVariant(title, storageVariantsWithPglite, startOAuthApi, body);
}
