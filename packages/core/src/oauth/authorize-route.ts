import { z } from 'zod';
import { randomBase64url } from '../base64url.js';
import { ClientClosedError, GatewayError } from '../errors/gateway-error.js';
import { defineRoute } from '../http/route.js';
import { validate } from '../http/validate.js';
import { usdMicrosSchema } from '../money/usd-schema.js';
import { OAuthError, oauthErrorResponse, oauthErrorSchema, oauthJson } from './oauth-errors.js';
import { S256_CODE_CHALLENGE } from './pkce.js';
import { readOAuthJson } from './read-oauth-body.js';

/** How long an approved code may wait for its redemption. */
export const CODE_TTL_MS = 10 * 60_000;

const authorizeBody = z
  .object({
    client_id: z
      .string('must be a string')
      .min(1, 'must not be empty')
      .max(200, 'must be at most 200 characters')
      .refine((id) => !id.includes('\u0000'), 'must not contain NUL characters'),
    redirect_uri: z
      .string('must be a string')
      .min(1, 'must not be empty')
      .max(2000, 'must be at most 2000 characters'),
    code_challenge: z
      .string('must be a string')
      .regex(S256_CODE_CHALLENGE, 'must be 43 base64url characters: BASE64URL(SHA256(code_verifier))'),
    code_challenge_method: z.literal('S256', 'must be "S256"'),
    state: z.string('must be a string').max(2000, 'must be at most 2000 characters').optional(),
    spend_limit_usd: usdMicrosSchema({ positive: true, allowString: false }).nullable().optional(),
  })
  .meta({ id: 'OAuthAuthorizeRequest' });

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
 * Refusals of the request itself are in the RFC 6749 shape; a missing or wrong key is the gateway's
 * envelope (authentication comes first). The code is stored only as its SHA-256.
 */
export const authorizeRoute = defineRoute({
  method: 'POST',
  path: '/v1/oauth/authorize',
  operationId: 'oauthAuthorize',
  summary: 'Approve an OAuth client: issue an authorization code (PKCE S256) for the caller’s account',
  tag: 'OAuth',
  access: 'provisioning',
  documentedBody: { schema: authorizeBody, mediaTypes: ['application/json'] },
  responses: {
    200: { description: 'The code, and where to send the user with it', schema: authorizeResponseSchema },
    400: {
      description: 'invalid_request, or invalid_client for an unknown client_id (RFC 6749 shape)',
      schema: oauthErrorSchema,
    },
  },
  async handle({ request, auth, deps }) {
    let body: z.output<typeof authorizeBody>;
    try {
      body = validate(authorizeBody, await readOAuthJson(request), 'body');
    } catch (error) {
      if (error instanceof OAuthError) return oauthErrorResponse(error);
      if (error instanceof GatewayError && !(error instanceof ClientClosedError)) {
        return oauthErrorResponse(new OAuthError('invalid_request', error.message));
      }
      throw error;
    }
    const client = await deps.storage.getOAuthClient(body.client_id);
    if (!client) {
      return oauthErrorResponse(new OAuthError('invalid_client', 'No OAuth client has this client_id.', 400));
    }
    if (!client.redirectUris.includes(body.redirect_uri)) {
      return oauthErrorResponse(
        new OAuthError(
          'invalid_request',
          'redirect_uri is not one of the redirect URIs registered for this client.',
        ),
      );
    }
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
  },
});
