import { z } from 'zod';
import { GatewayError } from '../../errors/gateway-error.js';
import { jsonResponse } from '../../http/responses.js';
import { defineRoute } from '../../http/route.js';
import { storedText } from '../../http/stored-text.js';
import { LIMIT_RESETS } from '../../metering/limit-windows.js';
import { usdMicrosSchema } from '../../money/usd-schema.js';
import { createApiKey } from '../accounts/create-key.js';
import { keyView, keyViewSchema, keyViews } from './key-view.js';

const name = storedText().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters');
const spendLimit = usdMicrosSchema({ positive: true, allowString: false });
/** Capped so the value fits every database's integer column; no upstream takes more anyway. */
const rpm = z
  .int('must be an integer')
  .min(1, 'must be at least 1')
  .max(1_000_000, 'must be at most 1000000');

/** OpenRouter's names; null (or left out) caps the lifetime. */
const limitReset = z
  .enum(LIMIT_RESETS, { error: 'must be "daily", "weekly", "monthly" or null' })
  .nullable()
  .optional();

const createKeyBody = z
  .object({
    name,
    spend_limit_usd: spendLimit.optional(),
    limit_reset: limitReset,
    rate_limit_rpm: rpm.optional(),
    project_id: storedText().min(1).optional(),
    scope: z.string().optional(),
  })
  .strict();

const patchKeyBody = z
  .object({
    name: name.optional(),
    spend_limit_usd: spendLimit.nullable().optional(),
    limit_reset: limitReset,
    rate_limit_rpm: rpm.nullable().optional(),
    disabled: z.boolean().optional(),
  })
  .strict()
  .refine(
    (patch) => Object.keys(patch).length > 0,
    'give at least one of name, spend_limit_usd, limit_reset, rate_limit_rpm, disabled',
  );

const createdKeySchema = z
  .object({
    data: keyViewSchema.extend({ key: z.string().describe('The full key; shown only in this response.') }),
  })
  .meta({ id: 'CreatedApiKey' });
const keyResponseSchema = z.object({ data: keyViewSchema });
const keyListSchema = z.object({ data: z.array(keyViewSchema) });

const notFound = (id: string) => new GatewayError('not_found', `No API key "${id}" on this account.`);
const cannotEnable = () =>
  new GatewayError('invalid_request', 'body.disabled: a revoked key cannot be enabled (create a new key).');
/** The caller's own key: paused or revoked, it would lock its holder (the dashboard's user) out. */
const selfLockout = (action: 'disable' | 'revoke') =>
  new GatewayError(
    'invalid_request',
    `A key cannot ${action} itself: ${action} it with another provisioning key of the account.`,
  );

/**
 * The provisioning API: an account mints, lists, changes and revokes its own keys. `disabled`
 * pauses and resumes a key; `DELETE` revokes it for good. No key pauses or revokes itself.
 */
export const keysRoutes = [
  defineRoute({
    method: 'POST',
    path: '/v1/keys',
    operationId: 'createKey',
    summary: 'Mint an inference key (the full key is returned only here)',
    tag: 'Keys',
    access: 'provisioning',
    body: createKeyBody,
    responses: { 201: { description: 'The new key', schema: createdKeySchema } },
    async handle({ body, auth, deps }) {
      if (body.scope !== undefined && body.scope !== 'inference') {
        throw new GatewayError(
          'invalid_request',
          'body.scope: keys created through the API are always "inference".',
        );
      }
      const accountId = auth.account.id;
      if (body.project_id !== undefined && !(await deps.storage.getProject(accountId, body.project_id))) {
        throw new GatewayError(
          'invalid_request',
          `body.project_id: no project "${body.project_id}" on this account.`,
        );
      }
      const { key, secret } = await createApiKey(deps.storage, {
        accountId,
        name: body.name,
        scope: 'inference',
        env: auth.key.env,
        projectId: body.project_id ?? null,
        spendLimitMicros: body.spend_limit_usd ?? null,
        limitReset: body.limit_reset ?? null,
        rateLimitRpm: body.rate_limit_rpm ?? null,
      });
      // A new key has spent nothing in any window.
      return jsonResponse({ data: { ...keyView(key, undefined, deps.now()), key: secret } }, 201);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/keys',
    operationId: 'listKeys',
    summary: "List the account's keys, disabled ones included (no secrets)",
    tag: 'Keys',
    access: 'provisioning',
    responses: { 200: { description: 'The keys', schema: keyListSchema } },
    async handle({ auth, deps }) {
      const keys = await deps.storage.listApiKeys(auth.account.id);
      return jsonResponse({ data: await keyViews(deps.storage, keys, deps.now()) });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/keys/{id}',
    operationId: 'getKey',
    summary: 'One key of the account',
    tag: 'Keys',
    access: 'provisioning',
    responses: { 200: { description: 'The key', schema: keyResponseSchema } },
    async handle({ params, auth, deps }) {
      const key = await deps.storage.getApiKey(auth.account.id, params.id!);
      if (!key) throw notFound(params.id!);
      return jsonResponse({ data: (await keyViews(deps.storage, [key], deps.now()))[0] });
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/v1/keys/{id}',
    operationId: 'updateKey',
    summary:
      'Change the name, the limits (null clears one) or `disabled` (pause and resume; a revoked key stays disabled)',
    tag: 'Keys',
    access: 'provisioning',
    body: patchKeyBody,
    responses: { 200: { description: 'The updated key', schema: keyResponseSchema } },
    async handle({ params, body, auth, deps }) {
      const id = params.id!;
      if (body.disabled === true && id === auth.key.id) throw selfLockout('disable');
      const accountId = auth.account.id;
      const current = await deps.storage.getApiKey(accountId, id);
      if (!current) throw notFound(id);
      if (body.disabled === false && current.revoked) throw cannotEnable();
      const key = await deps.storage.updateApiKey(accountId, id, {
        name: body.name,
        spendLimitMicros: body.spend_limit_usd,
        limitReset: body.limit_reset,
        rateLimitRpm: body.rate_limit_rpm,
        disabled: body.disabled,
      });
      if (!key) throw notFound(id);
      // Revoked between the read and the update: the storage kept it disabled; say so.
      if (body.disabled === false && key.revoked) throw cannotEnable();
      return jsonResponse({ data: (await keyViews(deps.storage, [key], deps.now()))[0] });
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/v1/keys/{id}',
    operationId: 'revokeKey',
    summary: 'Revoke a key for good: the row stays (revoked, disabled); later use fails 401 key_revoked',
    tag: 'Keys',
    access: 'provisioning',
    responses: { 200: { description: 'The revoked key', schema: keyResponseSchema } },
    async handle({ params, auth, deps }) {
      const id = params.id!;
      if (id === auth.key.id) throw selfLockout('revoke');
      const key = await deps.storage.revokeApiKey(auth.account.id, id);
      if (!key) throw notFound(id);
      return jsonResponse({ data: (await keyViews(deps.storage, [key], deps.now()))[0] });
    },
  }),
];
