import { z } from 'zod';
import { GatewayError } from '../../errors/gateway-error.js';
import { jsonResponse } from '../../http/responses.js';
import { defineRoute, type Route } from '../../http/route.js';
import { OAUTH_SCOPE } from './token-grants.js';

const metadataSchema = z
  .object({
    issuer: z.string(),
    authorization_endpoint: z.string().optional(),
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
 * The issuer is the gateway's configured public URL (else the address its server listens on),
 * never the request's `Host`, which any caller may set; the authorization endpoint is the page
 * where an account holder approves a client (the dashboard's), since `POST /v1/oauth/authorize`
 * takes a provisioning key no browser redirect carries. Every client is issued a secret, so the
 * token endpoint takes no unauthenticated client (`none`).
 */
export function oauthMetadataRoute(): Route {
  return defineRoute({
    method: 'GET',
    path: '/.well-known/oauth-authorization-server',
    operationId: 'oauthServerMetadata',
    summary: 'OAuth authorization server metadata (RFC 8414)',
    tag: 'OAuth',
    access: 'public',
    responses: { 200: { description: 'The metadata document', schema: metadataSchema } },
    handle({ deps }) {
      const issuer = deps.oauth.issuer();
      if (issuer === undefined) {
        throw new GatewayError(
          'not_found',
          'No OAuth metadata: the gateway does not know its public URL (config public_url, or the publicUrl option).',
        );
      }
      const approvePage = deps.oauth.approvePage;
      return jsonResponse({
        issuer,
        ...(approvePage !== undefined && { authorization_endpoint: underIssuer(issuer, approvePage) }),
        token_endpoint: `${issuer}/v1/oauth/token`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'client_credentials'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
        scopes_supported: [OAUTH_SCOPE],
      } satisfies z.output<typeof metadataSchema>);
    },
  });
}

/** An absolute URL as is; a path appended to the issuer (which may have a path of its own). */
function underIssuer(issuer: string, page: string): string {
  if (/^[a-z][a-z0-9+.-]*:/i.test(page)) return page;
  return `${issuer}${page.startsWith('/') ? '' : '/'}${page}`;
}
