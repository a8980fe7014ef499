import { GatewayError } from '../../errors/gateway-error.js';

/** Seconds a cached answer lives when the request does not say (`X-Gateway-Cache-TTL`). */
const DEFAULT_CACHE_TTL_SECONDS = 300;
/** The longest a cached answer may live. */
const MAX_CACHE_TTL_SECONDS = 86_400;

/** A request that opted in to the response cache. */
export interface CacheRequest {
  /** The request's key into the account's cache (SHA-256 hex of the request as sent upstream). */
  key: string;
  ttlMs: number;
}

/** Fields that do not change what goes upstream, so they are not part of the key. */
const OUTSIDE_THE_KEY = new Set(['metadata', 'stream', 'stream_options', 'cache', 'preset']);

/**
 * Whether the request asked for the response cache: `X-Gateway-Cache: true` (or `false`, which
 * overrides a preset), else a preset's `cache: true` (carried in the body as `cache`). With it, the
 * TTL from `X-Gateway-Cache-TTL` (1 to 86,400 seconds, default 300) and the key: a hash of the
 * endpoint and the request as sent upstream, without `metadata`, `stream` and the headers (product.md
 * "Response cache"). A header that cannot be read is `400 invalid_request` naming it.
 */
export async function readCacheRequest(
  headers: Headers,
  endpoint: string,
  body: Record<string, unknown>,
  sha256Hex: (text: string) => string | Promise<string>,
): Promise<CacheRequest | null> {
  const header = headers.get('x-gateway-cache');
  let wanted = body.cache === true;
  if (header !== null) {
    const value = header.trim().toLowerCase();
    if (value !== 'true' && value !== 'false') {
      throw new GatewayError('invalid_request', 'X-Gateway-Cache: must be "true" or "false".');
    }
    wanted = value === 'true';
  }
  if (!wanted) return null;
  const ttlSeconds = readTtl(headers.get('x-gateway-cache-ttl'));
  return {
    key: await sha256Hex(`${endpoint}\n${canonicalJson(body, OUTSIDE_THE_KEY)}`),
    ttlMs: ttlSeconds * 1000,
  };
}

function readTtl(header: string | null): number {
  if (header === null) return DEFAULT_CACHE_TTL_SECONDS;
  const text = header.trim();
  const seconds = /^\d{1,6}$/.test(text) ? Number(text) : Number.NaN;
  if (!(seconds >= 1 && seconds <= MAX_CACHE_TTL_SECONDS)) {
    throw new GatewayError(
      'invalid_request',
      `X-Gateway-Cache-TTL: must be a whole number of seconds from 1 to ${MAX_CACHE_TTL_SECONDS}.`,
    );
  }
  return seconds;
}

/**
 * JSON with object keys sorted at every depth (arrays keep their order), so two requests that differ
 * only in key order share a key; top-level fields in `skip` are left out.
 */
function canonicalJson(value: unknown, skip: ReadonlySet<string> = new Set()): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .filter((key) => !skip.has(key) && (value as Record<string, unknown>)[key] !== undefined)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
