import { displayPrefix, mintApiKey } from '../../auth/api-key.js';
import type { GatewayDeps } from '../../gateway-deps.js';
import { clientCredentialsToken } from './client-credentials-token.js';
import { OAuthError } from './oauth-errors.js';
import { verifyS256 } from './pkce.js';
import { authenticateClient } from './token-client-auth.js';

/** The only scope a token carries: the minted key is an inference key. */
export const OAUTH_SCOPE = 'inference';

/** What a grant hands out: the access token and, when it expires, in how many seconds. */
export interface GrantedToken {
  accessToken: string;
  expiresIn?: number;
}

const invalidGrant = (description: string) => new OAuthError('invalid_grant', description);

function required(params: ReadonlyMap<string, string>, name: string): string {
  const value = params.get(name);
  if (value === undefined) throw new OAuthError('invalid_request', `The parameter ${name} is required.`);
  return value;
}

/** Whether the account exists and is not suspended (a suspended account gets no token). */
async function accountActive(deps: GatewayDeps, accountId: string): Promise<boolean> {
  const account = await deps.storage.getAccount(accountId);
  return account !== null && !account.suspended;
}

/**
 * `grant_type=authorization_code` (RFC 6749 §4.1.3 with PKCE, RFC 7636 §4.5): the client
 * authenticates with its secret; the code must have been approved for this client and this
 * `redirect_uri`, the verifier must hash to its challenge, and the approving account must not be
 * suspended (`invalid_grant`); only then is it redeemed, so only a caller holding all of them can
 * use it up. The redemption mints a key of the approving account atomically; a code redeemed
 * before is a replay, and the key of its first redemption is revoked (§4.1.2).
 */
export async function authorizationCodeGrant(
  request: Request,
  params: ReadonlyMap<string, string>,
  deps: GatewayDeps,
): Promise<GrantedToken> {
  const { client } = await authenticateClient(request, params, deps);
  const code = required(params, 'code');
  const redirectUri = required(params, 'redirect_uri');
  const codeVerifier = required(params, 'code_verifier');
  const codeHash = await deps.hashKey(code);
  const found = await deps.storage.getOAuthCode(codeHash);
  if (!found) throw invalidGrant('The authorization code is not valid (unknown, expired or withdrawn).');
  if (found.clientId !== client.id)
    throw invalidGrant('The authorization code was issued to another client.');
  if (found.redirectUri !== redirectUri) {
    throw invalidGrant('redirect_uri differs from the one the authorization code was approved for.');
  }
  if (!(await verifyS256(codeVerifier, found.codeChallenge))) {
    throw invalidGrant('code_verifier does not match the code_challenge (S256).');
  }
  if (!(await accountActive(deps, found.accountId))) {
    throw invalidGrant('The account that approved this code is suspended.');
  }
  const minted = await mintApiKey('live');
  const redemption = await deps.storage.redeemOAuthCode({
    codeHash,
    now: deps.now(),
    key: { name: client.name, env: minted.env, hash: minted.hash, prefix: minted.prefix },
  });
  switch (redemption.outcome) {
    case 'redeemed':
      return { accessToken: minted.key };
    case 'replayed':
      deps.logger.warn(
        { clientId: client.id, accountId: found.accountId, revokedKeyId: redemption.revokedKeyId },
        'OAuth authorization code replayed: the key of its first redemption is revoked',
      );
      throw invalidGrant('The authorization code was already used; the key issued for it has been revoked.');
    case 'expired':
      throw invalidGrant('The authorization code has expired (codes live 10 minutes).');
    case 'unknown':
      throw invalidGrant('The authorization code is not valid (unknown, expired or withdrawn).');
  }
}

/**
 * `grant_type=client_credentials` (RFC 6749 §4.4): a client, authenticated with its secret, gets
 * an inference key of the account that registered it (`unauthorized_client` while that account is
 * suspended), named after it, with no spend limit, expiring after the configured lifetime. While
 * the client's latest key has at least half its life left, that key's token is handed out again
 * (recomputed from the secret, `clientCredentialsToken`), so a client asking on every call, even
 * many at once, holds at most two live keys rather than one more per call. `scope`, when given,
 * must be `inference`.
 */
export async function clientCredentialsGrant(
  request: Request,
  params: ReadonlyMap<string, string>,
  deps: GatewayDeps,
): Promise<GrantedToken> {
  const { client, secret } = await authenticateClient(request, params, deps);
  const scope = params.get('scope');
  if (scope !== undefined && scope !== OAUTH_SCOPE) {
    throw new OAuthError('invalid_scope', `The only scope is "${OAUTH_SCOPE}".`);
  }
  if (!(await accountActive(deps, client.accountId))) {
    throw new OAuthError('unauthorized_client', 'The account of this client is suspended.');
  }
  const ttlMs = deps.oauth.clientCredentialsTtlMs;
  const now = deps.now();
  const expiresAt = now + ttlMs;
  const accessToken = await clientCredentialsToken(secret, client.id, expiresAt);
  const issued = await deps.storage.issueClientCredentialsKey({
    clientId: client.id,
    validAt: now + Math.ceil(ttlMs / 2),
    expiresAt,
    key: {
      name: client.name,
      env: 'live',
      hash: await deps.hashKey(accessToken),
      prefix: displayPrefix(accessToken),
    },
  });
  const expiresIn = (at: number) => Math.max(1, Math.floor((at - now) / 1000));
  switch (issued.outcome) {
    case 'minted':
      return { accessToken, expiresIn: expiresIn(expiresAt) };
    case 'existing':
      return {
        accessToken: await clientCredentialsToken(secret, client.id, issued.expiresAt),
        expiresIn: expiresIn(issued.expiresAt),
      };
    case 'unknown_client':
      throw new OAuthError('invalid_client', 'Client authentication failed: unknown client.');
  }
}
