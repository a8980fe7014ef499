import { type Parsed, parseOptionalUsd } from '../format/parse-usd.js';

/** What an OAuth client asks for in the approve page's query string. */
export interface AuthorizeParams {
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  state: string | undefined;
  /** The spend limit the client suggests, as typed in the URL; empty when none. */
  spendLimitUsd: string;
}

export type ParsedAuthorize = { ok: true; params: AuthorizeParams } | { ok: false; message: string };

/** True when the page was opened as an OAuth approve page (its query has `client_id`). */
export function isAuthorizeRequest(search: string): boolean {
  return new URLSearchParams(search).has('client_id');
}

/** The approve page's params from `location.search`, or why they cannot be approved. */
export function parseAuthorizeParams(search: string): ParsedAuthorize {
  const query = new URLSearchParams(search);
  const clientId = query.get('client_id') ?? '';
  const redirectUri = query.get('redirect_uri') ?? '';
  const codeChallenge = query.get('code_challenge') ?? '';
  const method = query.get('code_challenge_method');
  if (clientId === '') return { ok: false, message: 'The request has no client_id.' };
  if (redirectUri === '') return { ok: false, message: 'The request has no redirect_uri.' };
  if (codeChallenge === '')
    return { ok: false, message: 'The request has no code_challenge (PKCE is required).' };
  if (method !== 'S256') return { ok: false, message: 'code_challenge_method must be S256.' };
  return {
    ok: true,
    params: {
      clientId,
      redirectUri,
      codeChallenge,
      state: query.get('state') ?? undefined,
      spendLimitUsd: query.get('spend_limit_usd') ?? '',
    },
  };
}

/**
 * Where a denial sends the user: the registered redirect_uri with `error=access_denied` (and the
 * client's `state`) added to its query (RFC 6749 §4.1.2.1).
 */
export function denyRedirectUrl(redirectUri: string, state: string | undefined): string {
  const url = safeRedirect(redirectUri);
  url.searchParams.append('error', 'access_denied');
  if (state !== undefined) url.searchParams.append('state', state);
  return url.toString();
}

export type SpendLimit = Parsed<number | undefined>;

/** The spend limit field: empty means none; otherwise a positive USD amount. */
export function parseSpendLimit(input: string): SpendLimit {
  const parsed = parseOptionalUsd(
    input,
    'The spend limit must be a positive amount in USD, or empty for none.',
  );
  return parsed.ok ? { ok: true, value: parsed.value ?? undefined } : parsed;
}

const UNSAFE_SCHEMES = new Set(['javascript:', 'data:', 'vbscript:', 'blob:', 'file:']);

/** The URL, refused when its scheme would run or read something in this page instead of leaving it. */
function safeRedirect(target: string): URL {
  const url = new URL(target);
  if (UNSAFE_SCHEMES.has(url.protocol)) throw new Error(`Refusing to redirect to a ${url.protocol} URL.`);
  return url;
}

/**
 * Whether the gateway's `redirect_to` leads to the redirect_uri the user saw (same scheme, host and
 * path; only the query differs), so an approval never sends the code anywhere else.
 */
export function isRedirectTo(redirectTo: string, redirectUri: string): boolean {
  try {
    const to = safeRedirect(redirectTo);
    const expected = safeRedirect(redirectUri);
    return (
      to.protocol === expected.protocol && to.host === expected.host && to.pathname === expected.pathname
    );
  } catch {
    return false;
  }
}
