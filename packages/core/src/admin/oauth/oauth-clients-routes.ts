import { z } from 'zod';
import { GatewayError } from '../../errors/gateway-error.js';
import { jsonResponse } from '../../http/responses.js';
import { defineRoute } from '../../http/route.js';
import { storedText } from '../../http/stored-text.js';
import { newId } from '../../ids.js';
import { newClientSecret } from './client-secret.js';
import { oauthClientView, oauthClientViewSchema } from './oauth-client-view.js';

/** The hosts an `http:` redirect URI may name: the user's own machine (RFC 8252 §7.3). */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * Why `value` cannot be a registered redirect URI, or `null` when it can (RFC 9700 §2.1, §4.1.3):
 * an absolute `https:` URL, or `http:` on a loopback host (a native app's local listener), with no
 * user name or password (they can disguise where the URL leads) and no fragment (RFC 6749
 * §3.1.2), nor any whitespace or control character.
 */
function redirectUriProblem(value: string): string | null {
  if (
    /\s/.test(value) ||
    [...value].some((char) => char.charCodeAt(0) < 0x20 || char.charCodeAt(0) === 0x7f)
  ) {
    return 'must not contain whitespace or control characters';
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an https URL';
  if (url.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname)) {
    return 'must be https, or http on a loopback host (127.0.0.1, [::1], localhost)';
  }
  if (url.username !== '' || url.password !== '' || /^[a-z]+:\/\/[^/?#]*@/i.test(value)) {
    return 'must not contain a user name or password';
  }
  if (value.includes('#')) return 'must not contain a fragment (#)';
  return null;
}

const createClientBody = z
  .object({
    name: storedText().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
    redirect_uris: z
      .array(
        storedText()
          .max(2000, 'must be at most 2000 characters')
          .superRefine((uri, ctx) => {
            const problem = redirectUriProblem(uri);
            if (problem) ctx.addIssue({ code: 'custom', message: problem });
          }),
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
 * only as its SHA-256. Deleting a client stops new codes and tokens for it and revokes every key
 * it obtained, of whichever account.
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
    summary: 'Delete an OAuth client and its pending codes, and revoke every key it obtained',
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
