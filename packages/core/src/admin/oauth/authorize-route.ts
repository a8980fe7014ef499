import { z } from 'zod';
import { randomBase64url } from '../../base64url.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { defineRoute } from '../../http/route.js';
import { storedText } from '../../http/stored-text.js';
import { usdMicrosSchema } from '../../money/usd-schema.js';
import type { OAuthClient } from '../../storage/oauth.js';
import type { Storage } from '../../storage/types.js';
import { OAuthError, oauthErrorResponse, oauthErrorSchema, oauthJson } from './oauth-errors.js';
import { S256_CODE_CHALLENGE } from './pkce.js';

/** How long an approved code may wait for its redemption. */
const CODE_TTL_MS = 10 * 60_000;

/** The client and where it sends the user back: the same rules in the body (POST) and query (GET). */
const clientParams = {
  client_id: storedText().min(1, 'must not be empty').max(200, 'must be at most 200 characters'),
  redirect_uri: z
    .string('must be a string')
    .min(1, 'must not be empty')
    .max(2000, 'must be at most 2000 characters'),
};

const authorizeBody = z
  .object({
    ...clientParams,
    code_challenge: z
      .string('must be a string')
      .regex(S256_CODE_CHALLENGE, 'must be 43 base64url characters: BASE64URL(SHA256(code_verifier))'),
    code_challenge_method: z.literal('S256', 'must be "S256"'),
    state: z.string('must be a string').max(2000, 'must be at most 2000 characters').optional(),
    spend_limit_usd: usdMicrosSchema({ positive: true, allowString: false }).nullable().optional(),
  })
  .meta({ id: 'OAuthAuthorizeRequest' });

const previewQuery = z.object(clientParams).meta({ id: 'OAuthAuthorizePreviewQuery' });

const previewResponseSchema = z
  .object({
    client_id: z.string(),
    name: z.string().describe('The name the client registered under, to show the account holder'),
    redirect_uri: z.string().describe('Registered for this client: safe to send the user back to'),
  })
  .meta({ id: 'OAuthAuthorizePreview' });

const unregisteredRedirect = {
  description:
    'A redirect_uri the client did not register: RFC 6749 invalid_request, since no redirect may follow',
  schema: oauthErrorSchema,
};

/**
 * The client `client_id` names (else `400 invalid_request` in the gateway's envelope), provided
 * `redirect_uri` is one it registered (compared exactly). An unregistered `redirect_uri` is the one
 * refusal answered in the RFC 6749 shape (product.md): the caller must not be sent back there.
 */
async function registeredClient(
  storage: Storage,
  params: { client_id: string; redirect_uri: string },
  where: 'body' | 'query',
): Promise<OAuthClient> {
  const client = await storage.getOAuthClient(params.client_id);
  if (!client) {
    throw new GatewayError('invalid_request', `${where}.client_id: no OAuth client has this client_id.`);
  }
  if (!client.redirectUris.includes(params.redirect_uri)) {
    throw new OAuthError(
      'invalid_request',
      'redirect_uri is not one of the redirect URIs registered for this client.',
    );
  }
  return client;
}

/** Runs an authorize handler, answering its `OAuthError` (an unregistered redirect_uri) in the RFC 6749 shape. */
async function answeringOAuth(handle: () => Promise<Response>): Promise<Response> {
  try {
    return await handle();
  } catch (error) {
    if (error instanceof OAuthError) return oauthErrorResponse(error);
    throw error;
  }
}

const authorizeResponseSchema = z
  .object({
    code: z.string().describe('Single use; expires after 10 minutes.'),
    redirect_to: z.string().describe('redirect_uri with code (and state) added to its query'),
  })
  .meta({ id: 'OAuthAuthorization' });

/**
 * The account holder approves a client (RFC 6749 §4.1.1–4.1.2, with PKCE S256 required): called
 * with the approving account's provisioning key, it issues a code the client redeems at
 * `/v1/oauth/token` for an inference key of that account. Any account's client may be approved.
 * Refusals are the gateway's envelope, like every endpoint's but the token endpoint's, except an
 * unregistered `redirect_uri` (RFC 6749 shape). The code is stored only as its SHA-256.
 */
export const authorizeRoute = defineRoute({
  method: 'POST',
  path: '/v1/oauth/authorize',
  operationId: 'oauthAuthorize',
  summary: 'Approve an OAuth client: issue an authorization code (PKCE S256) for the caller’s account',
  tag: 'OAuth',
  access: 'provisioning',
  body: authorizeBody,
  responses: {
    200: { description: 'The code, and where to send the user with it', schema: authorizeResponseSchema },
    400: unregisteredRedirect,
  },
  handle: ({ body, auth, deps }) =>
    answeringOAuth(async () => {
      const client = await registeredClient(deps.storage, body, 'body');
      const code = randomBase64url(32);
      const now = deps.now();
      await deps.storage.createOAuthCode({
        codeHash: await deps.hashKey(code),
        clientId: client.id,
        accountId: auth.account.id,
        redirectUri: body.redirect_uri,
        codeChallenge: body.code_challenge,
        spendLimitMicros: body.spend_limit_usd ?? null,
        createdAt: now,
        expiresAt: now + CODE_TTL_MS,
      });
      const redirectTo = new URL(body.redirect_uri);
      redirectTo.searchParams.append('code', code);
      if (body.state !== undefined) redirectTo.searchParams.append('state', body.state);
      return oauthJson({ code, redirect_to: redirectTo.href });
    }),
});

/**
 * What the approve page shows before the account holder decides: the client's name, and that
 * `redirect_uri` is registered for it, so the page may send a denial there. Checked exactly as
 * `POST /v1/oauth/authorize` checks them, with the same refusals; nothing is stored.
 */
export const authorizePreviewRoute = defineRoute({
  method: 'GET',
  path: '/v1/oauth/authorize',
  operationId: 'oauthAuthorizePreview',
  summary: 'Preview an OAuth approval: the client’s name, once client_id and redirect_uri check out',
  tag: 'OAuth',
  access: 'provisioning',
  query: previewQuery,
  responses: {
    200: { description: 'The client, and its registered redirect_uri', schema: previewResponseSchema },
    400: unregisteredRedirect,
  },
  handle: ({ query, deps }) =>
    answeringOAuth(async () => {
      const client = await registeredClient(deps.storage, query, 'query');
      return oauthJson({ client_id: client.id, name: client.name, redirect_uri: query.redirect_uri });
    }),
});
