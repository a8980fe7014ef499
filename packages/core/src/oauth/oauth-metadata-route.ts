import { z } from 'zod';
import { jsonResponse } from '../http/responses.js';
import { defineRoute, type Route } from '../http/route.js';
import { OAUTH_SCOPE } from './token-grants.js';

const metadataSchema = z
  .object({
    issuer: z.string(),
    authorization_endpoint: z.string(),
    token_endpoint: z.string(),
    response_types_supported: z.array(z.string()),
    grant_types_supported: z.array(z.string()),
    code_challenge_methods_supported: z.array(z.string()),
    token_endpoint_auth_methods_supported: z.array(z.string()),
    scopes_supported: z.array(z.string()),
  })
  .meta({ id: 'OAuthServerMetadata' });

/**
 * `GET /.well-known/oauth-authorization-server` (RFC 8414), outside `/v1` and under `basePath`.
 * The issuer is where the request reached the gateway: its origin plus `basePath`.
 */
export function oauthMetadataRoute(basePath: string): Route {
  return defineRoute({
    method: 'GET',
    path: '/.well-known/oauth-authorization-server',
    operationId: 'oauthServerMetadata',
    summary: 'OAuth authorization server metadata (RFC 8414)',
    tag: 'OAuth',
    access: 'public',
    responses: { 200: { description: 'The metadata document', schema: metadataSchema } },
    handle({ request }) {
      const issuer = `${new URL(request.url).origin}${basePath}`;
      return jsonResponse({
        issuer,
        authorization_endpoint: `${issuer}/v1/oauth/authorize`,
        token_endpoint: `${issuer}/v1/oauth/token`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'client_credentials'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
        scopes_supported: [OAUTH_SCOPE],
      } satisfies z.output<typeof metadataSchema>);
    },
  });
}
