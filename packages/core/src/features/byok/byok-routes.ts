import { z } from 'zod';
import { GatewayError } from '../../errors/gateway-error.js';
import { defineRoute } from '../../http/route.js';
import { addByokKey, newByokKeySchema } from './add-byok-key.js';
import { byokKeyView, byokKeyViewSchema } from './byok-view.js';

const byokListSchema = z.object({ data: z.array(byokKeyViewSchema) });
const deletedByokSchema = byokKeyViewSchema.extend({ deleted: z.literal(true) });

const notFound = (id: string) => new GatewayError('not_found', `No BYOK key "${id}" on this account.`);

/**
 * The BYOK API: an account stores its own provider keys, sealed under the server secret. No answer,
 * log line or error ever carries a key, or anything derived from one.
 */
export const byokRoutes = [
  defineRoute({
    method: 'POST',
    path: '/v1/byok',
    operationId: 'createByokKey',
    summary: "Store one of the account's own provider keys (sealed; never shown again)",
    tag: 'BYOK',
    access: 'provisioning',
    body: newByokKeySchema,
    responses: { 201: { description: 'The stored key, without the key itself', schema: byokKeyViewSchema } },
    async handle({ body, auth, deps }) {
      const key = await addByokKey(deps.storage, deps.byokSealer, deps.catalogue, {
        ...body,
        accountId: auth.account.id,
      });
      return deps.jsonResponse(byokKeyView(key), 201);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/byok',
    operationId: 'listByokKeys',
    summary: "List the account's BYOK keys, oldest first (never the keys)",
    tag: 'BYOK',
    access: 'provisioning',
    responses: { 200: { description: 'The BYOK keys', schema: byokListSchema } },
    async handle({ auth, deps }) {
      const keys = await deps.storage.listByokKeys(auth.account.id);
      return deps.jsonResponse({ data: keys.map(byokKeyView) });
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/v1/byok/{id}',
    operationId: 'deleteByokKey',
    summary: 'Delete a BYOK key: its provider is then served by the paid routes again',
    tag: 'BYOK',
    access: 'provisioning',
    responses: { 200: { description: 'The deleted key', schema: deletedByokSchema } },
    async handle({ params, auth, deps }) {
      const id = params.id!;
      const accountId = auth.account.id;
      const key = (await deps.storage.listByokKeys(accountId)).find((k) => k.id === id);
      if (!key || !(await deps.storage.deleteByokKey(accountId, id))) throw notFound(id);
      return deps.jsonResponse({ ...byokKeyView(key), deleted: true }, 200);
    },
  }),
];
