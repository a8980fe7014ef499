import { z } from 'zod';
import { GatewayError } from '../errors/gateway-error.js';
import { jsonResponse } from '../http/responses.js';
import { defineRoute } from '../http/route.js';
import { newId } from '../ids.js';
import { newClientSecret } from './client-secret.js';
import { oauthClientView, oauthClientViewSchema } from './oauth-client-view.js';

/** An absolute `http:` or `https:` URL without a fragment (RFC 6749 §3.1.2), with no whitespace. */
function isRedirectUri(value: string): boolean {
  const control = [...value].some((char) => char.charCodeAt(0) < 0x20 || char.charCodeAt(0) === 0x7f);
  if (control || /\s/.test(value) || value.includes('#')) return false;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

const createClientBody = z
  .object({
    name: z
      .string('must be a string')
      .trim()
      .min(1, 'must not be empty')
      .max(100, 'must be at most 100 characters')
      .refine((text) => !text.includes('\u0000'), 'must not contain NUL characters'),
    redirect_uris: z
      .array(
        z
          .string('must be a string')
          .max(2000, 'must be at most 2000 characters')
          .refine(isRedirectUri, 'must be an absolute http or https URL without a fragment'),
        'must be an array of URLs',
      )
      .min(1, 'must hold at least one URL')
      .max(10, 'must hold at most 10 URLs')
      .refine((uris) => new Set(uris).size === uris.length, 'must not repeat a URL'),
  })
  .strict();

const createdClientSchema = oauthClientViewSchema
  .extend({ client_secret: z.string().describe('The client secret; shown only in this response.') })
  .meta({ id: 'CreatedOAuthClient' });
const clientListSchema = z.object({ data: z.array(oauthClientViewSchema) });
const deletedClientSchema = oauthClientViewSchema.extend({ deleted: z.literal(true) });

const notFound = (id: string) => new GatewayError('not_found', `No OAuth client "${id}" on this account.`);

/**
 * OAuth client registration: an account registers the applications that may ask its holders (or,
 * with their secret, the account itself) for inference keys. The secret is shown once and stored
 * only as its SHA-256. Deleting a client stops new codes and tokens for it; keys it already
 * obtained stay, as keys of the account (revoke them with `DELETE /v1/keys/{id}`).
 */
export const oauthClientsRoutes = [
  defineRoute({
    method: 'POST',
    path: '/v1/oauth/clients',
    operationId: 'createOAuthClient',
    summary: 'Register an OAuth client (its secret is returned only here)',
    tag: 'OAuth',
    access: 'provisioning',
    body: createClientBody,
    responses: { 201: { description: 'The new client and its secret', schema: createdClientSchema } },
    async handle({ body, auth, deps }) {
      const secret = newClientSecret();
      const client = await deps.storage.createOAuthClient({
        id: newId('client'),
        accountId: auth.account.id,
        name: body.name,
        redirectUris: body.redirect_uris,
        secretHash: await deps.hashKey(secret),
        createdAt: deps.now(),
      });
      const view = oauthClientView(client);
      return jsonResponse(
        {
          client_id: view.client_id,
          client_secret: secret,
          name: view.name,
          redirect_uris: view.redirect_uris,
          created_at: view.created_at,
        },
        201,
        { 'Cache-Control': 'no-store' },
      );
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/oauth/clients',
    operationId: 'listOAuthClients',
    summary: "List the account's OAuth clients, oldest first (never their secrets)",
    tag: 'OAuth',
    access: 'provisioning',
    responses: { 200: { description: 'The clients', schema: clientListSchema } },
    async handle({ auth, deps }) {
      const clients = await deps.storage.listOAuthClients(auth.account.id);
      return jsonResponse({ data: clients.map(oauthClientView) });
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/v1/oauth/clients/{id}',
    operationId: 'deleteOAuthClient',
    summary:
      'Delete an OAuth client and its pending codes; keys it obtained stay (revoke them with DELETE /v1/keys/{id})',
    tag: 'OAuth',
    access: 'provisioning',
    responses: { 200: { description: 'The deleted client', schema: deletedClientSchema } },
    async handle({ params, auth, deps }) {
      const id = params.id!;
      const accountId = auth.account.id;
      const client = await deps.storage.getOAuthClient(id);
      if (
        !client ||
        client.accountId !== accountId ||
        !(await deps.storage.deleteOAuthClient(accountId, id))
      ) {
        throw notFound(id);
      }
      return jsonResponse({ ...oauthClientView(client), deleted: true });
    },
  }),
];
