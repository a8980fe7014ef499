import { z } from 'zod';
import { ClientClosedError } from '../../errors/gateway-error.js';
import type { GatewayDeps } from '../../gateway-deps.js';
import { defineRoute } from '../../http/route.js';
import { OAuthError, oauthErrorResponse, oauthErrorSchema, oauthJson } from './oauth-errors.js';
import { readTokenParams } from './read-oauth-body.js';
import {
  authorizationCodeGrant,
  clientCredentialsGrant,
  type GrantedToken,
  OAUTH_SCOPE,
} from './token-grants.js';

const tokenRequestSchema = z
  .object({
    grant_type: z.enum(['authorization_code', 'client_credentials']),
    code: z.string().optional().describe('authorization_code: the code from /v1/oauth/authorize'),
    redirect_uri: z
      .string()
      .optional()
      .describe('authorization_code: the redirect URI the code was approved for'),
    code_verifier: z
      .string()
      .optional()
      .describe('authorization_code: the PKCE verifier (43–128 characters)'),
    client_id: z.string().optional().describe('The client, unless it authenticates with HTTP Basic'),
    client_secret: z.string().optional().describe('The client secret, unless sent with HTTP Basic'),
    scope: z.literal(OAUTH_SCOPE).optional().describe('client_credentials: the only scope'),
  })
  .meta({ id: 'OAuthTokenRequest' });

const tokenResponseSchema = z
  .object({
    access_token: z
      .string()
      .describe(
        'An inference key (gw_live_…). A code mints a new one; client_credentials answers the same one again while it has at least half its life left.',
      ),
    token_type: z.literal('Bearer'),
    scope: z.literal(OAUTH_SCOPE),
    expires_in: z
      .int()
      .positive()
      .optional()
      .describe(
        'client_credentials: seconds until the key stops working (authorization_code keys never expire)',
      ),
  })
  .meta({ id: 'OAuthTokenResponse' });

/**
 * The OAuth token endpoint (RFC 6749 §3.2): no bearer key; the client authenticates itself. Every
 * answer is in the RFC 6749 shape with `Cache-Control: no-store`, never the gateway's envelope, so
 * this handler catches everything; an unexpected fault is `500 server_error`, logged without the
 * request (which holds secrets, codes and verifiers).
 */
export const tokenRoute = defineRoute({
  method: 'POST',
  path: '/v1/oauth/token',
  operationId: 'oauthToken',
  summary: 'Exchange an authorization code (PKCE) or client credentials for an inference key',
  tag: 'OAuth',
  access: 'public',
  documentedBody: {
    schema: tokenRequestSchema,
    mediaTypes: ['application/x-www-form-urlencoded', 'application/json'],
  },
  responses: {
    200: { description: 'A new inference key of the account', schema: tokenResponseSchema },
    400: {
      description:
        'invalid_request, invalid_grant, unauthorized_client, unsupported_grant_type or invalid_scope (RFC 6749 §5.2)',
      schema: oauthErrorSchema,
    },
    401: { description: 'invalid_client, with WWW-Authenticate: Basic', schema: oauthErrorSchema },
  },
  async handle({ request, deps }) {
    try {
      const granted = await grant(request, deps);
      return oauthJson({
        access_token: granted.accessToken,
        token_type: 'Bearer',
        scope: OAUTH_SCOPE,
        ...(granted.expiresIn !== undefined && { expires_in: granted.expiresIn }),
      });
    } catch (error) {
      if (error instanceof OAuthError) return oauthErrorResponse(error);
      if (error instanceof ClientClosedError) throw error;
      const err = error as { name?: string; code?: unknown; stack?: string };
      deps.logger.error(
        { err: { name: err?.name, code: err?.code, frames: err?.stack?.split('\n').slice(1, 8).join('\n') } },
        'OAuth token endpoint failed unexpectedly',
      );
      return oauthErrorResponse(new OAuthError('server_error', 'The token endpoint failed unexpectedly.'));
    }
  },
});

async function grant(request: Request, deps: GatewayDeps): Promise<GrantedToken> {
  const params = await readTokenParams(request);
  const grantType = params.get('grant_type');
  if (grantType === undefined)
    throw new OAuthError('invalid_request', 'The parameter grant_type is required.');
  if (grantType === 'authorization_code') return authorizationCodeGrant(request, params, deps);
  if (grantType === 'client_credentials') return clientCredentialsGrant(request, params, deps);
  throw new OAuthError(
    'unsupported_grant_type',
    'Supported grant types: authorization_code, client_credentials.',
  );
}
