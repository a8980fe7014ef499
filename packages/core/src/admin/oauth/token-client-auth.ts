import type { GatewayDeps } from '../../gateway-deps.js';
import { hasNul } from '../../http/stored-text.js';
import type { OAuthClient } from '../../storage/types.js';
import { equalInConstantTime } from './client-secret.js';
import { OAuthError } from './oauth-errors.js';

/** The client a token request names, and the secret it presents (`null`: none). */
interface PresentedClient {
  clientId: string | null;
  secret: string | null;
}

/** A client that proved it holds its secret, and that secret (a grant may derive its token from it). */
interface AuthenticatedClient {
  client: OAuthClient;
  secret: string;
}

const BASIC = /^Basic[ \t]+([A-Za-z0-9+/=]+)[ \t]*$/i;

const authFailed = (description: string) => new OAuthError('invalid_client', description);

/**
 * The client of a token request, authenticated. It authenticates with HTTP Basic (RFC 6749
 * §2.3.1: `base64(urlencode(client_id) ":" urlencode(client_secret))`) or with `client_id` and
 * `client_secret` in the body, never both. Every client is issued a secret at registration, so
 * every grant requires it, `authorization_code` included (RFC 6749 §4.1.3: a client that was
 * issued credentials must authenticate). `invalid_client` (401) for an unknown client, a wrong
 * secret, or none.
 */
export async function authenticateClient(
  request: Request,
  params: ReadonlyMap<string, string>,
  deps: Pick<GatewayDeps, 'storage' | 'hashKey'>,
): Promise<AuthenticatedClient> {
  const presented = presentedClient(request.headers.get('authorization'), params);
  if (presented.clientId === null) {
    throw authFailed(
      'Client authentication is required: HTTP Basic, or client_id and client_secret in the body.',
    );
  }
  // Hashed before the lookup, so an unknown client and a wrong secret take about the same time.
  const presentedHash = presented.secret === null ? null : await deps.hashKey(presented.secret);
  // No client id holds a NUL, and Postgres cannot even compare one: not looked up.
  const client = hasNul(presented.clientId) ? null : await deps.storage.getOAuthClient(presented.clientId);
  if (!client) throw authFailed('Client authentication failed: unknown client.');
  if (presented.secret === null || presentedHash === null) {
    throw authFailed(
      'Client authentication is required: this client was issued a secret; send it with HTTP Basic or as client_secret.',
    );
  }
  if (!equalInConstantTime(presentedHash, client.secretHash)) {
    throw authFailed('Client authentication failed: wrong client secret.');
  }
  return { client, secret: presented.secret };
}

function presentedClient(authorization: string | null, params: ReadonlyMap<string, string>): PresentedClient {
  const bodyId = params.get('client_id') ?? null;
  const bodySecret = params.get('client_secret') ?? null;
  if (authorization === null) {
    if (bodySecret !== null && bodyId === null) {
      throw new OAuthError('invalid_request', 'client_secret was sent without client_id.');
    }
    return { clientId: bodyId, secret: bodySecret };
  }
  const basic = decodeBasic(authorization);
  if (bodySecret !== null) {
    throw new OAuthError(
      'invalid_request',
      'Use one client authentication method: HTTP Basic or client_secret in the body, not both.',
    );
  }
  if (bodyId !== null && bodyId !== basic.clientId) {
    throw new OAuthError('invalid_request', 'client_id in the body differs from the HTTP Basic user name.');
  }
  return basic;
}

/** The id and secret of an HTTP Basic header, each form-urlencoded (RFC 6749 §2.3.1). */
function decodeBasic(authorization: string): { clientId: string; secret: string } {
  const encoded = BASIC.exec(authorization)?.[1];
  if (!encoded) {
    throw authFailed(
      'The token endpoint authenticates clients with HTTP Basic (or credentials in the body).',
    );
  }
  let decoded: string;
  try {
    decoded = new TextDecoder('utf-8', { fatal: true }).decode(
      Uint8Array.from(atob(encoded), (char) => char.charCodeAt(0)),
    );
  } catch {
    throw authFailed('The HTTP Basic credentials are not valid base64 of UTF-8 text.');
  }
  const colon = decoded.indexOf(':');
  if (colon < 0) throw authFailed('The HTTP Basic credentials have no ":" between client id and secret.');
  try {
    const clientId = formDecode(decoded.slice(0, colon));
    const secret = formDecode(decoded.slice(colon + 1));
    if (clientId === '' || secret === '') throw new Error('empty');
    return { clientId, secret };
  } catch {
    throw authFailed('The HTTP Basic credentials are not a form-urlencoded client id and secret.');
  }
}

function formDecode(text: string): string {
  return decodeURIComponent(text.replace(/\+/g, ' '));
}
