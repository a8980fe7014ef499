import { createApiKey } from '../accounts/create-key.js';
import { mintApiKey } from '../auth/api-key.js';
import type { GatewayDeps } from '../gateway-deps.js';
import { OAuthError } from './oauth-errors.js';
import { verifyS256 } from './pkce.js';
import { authenticateClient } from './token-client-auth.js';

/** The only scope a token carries: the minted key is an inference key. */
export const OAUTH_SCOPE = 'inference';

const invalidGrant = (description: string) => new OAuthError('invalid_grant', description);

function required(params: ReadonlyMap<string, string>, name: string): string {
  const value = params.get(name);
  if (value === undefined) throw new OAuthError('invalid_request', `The parameter ${name} is required.`);
  return value;
}

/**
 * `grant_type=authorization_code` (RFC 6749 §4.1.3 with PKCE, RFC 7636 §4.5): the code must have
 * been approved for this client and this `redirect_uri`, and the verifier must hash to its
 * challenge; only then is it redeemed, so only a caller holding all three can use it up. The
 * redemption mints a key of the approving account atomically; a code redeemed before is a replay,
 * and the key of its first redemption is revoked (§4.1.2). Returns the new key.
 */
export async function authorizationCodeGrant(
  request: Request,
  params: ReadonlyMap<string, string>,
  deps: GatewayDeps,
): Promise<string> {
  const client = await authenticateClient(request, params, deps, { secretRequired: false });
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
  const minted = await mintApiKey('live');
  const redemption = await deps.storage.redeemOAuthCode({
    codeHash,
    now: deps.now(),
    key: { name: client.name, env: minted.env, hash: minted.hash, prefix: minted.prefix },
  });
  switch (redemption.outcome) {
    case 'redeemed':
      return minted.key;
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
 * `grant_type=client_credentials` (RFC 6749 §4.4): a confidential client, authenticated with its
 * secret, gets a key of the account that registered it, named after it, with no spend limit.
 * `scope`, when given, must be `inference`. Returns the new key.
 */
export async function clientCredentialsGrant(
  request: Request,
  params: ReadonlyMap<string, string>,
  deps: GatewayDeps,
): Promise<string> {
  const client = await authenticateClient(request, params, deps, { secretRequired: true });
  const scope = params.get('scope');
  if (scope !== undefined && scope !== OAUTH_SCOPE) {
    throw new OAuthError('invalid_scope', `The only scope is "${OAUTH_SCOPE}".`);
  }
  const { secret } = await createApiKey(deps.storage, {
    accountId: client.accountId,
    name: client.name,
    scope: 'inference',
    env: 'live',
  });
  return secret;
}
