import { z } from 'zod';
import { GatewayError } from '../../errors/gateway-error.js';
import { defineRoute } from '../../http/route.js';
import { storedText } from '../../http/stored-text.js';
import type { AccountFeaturesStorage, Preset } from '../../storage/account-features.js';
import { presetConfigSchema } from './preset-config-schema.js';

/** A preset name: a slug of 1 to 64 characters. */
const PRESET_NAME = /^[a-z0-9-]{1,64}$/;

const name = z
  .string('must be a string')
  .regex(PRESET_NAME, 'must be a slug of 1 to 64 characters from a-z, 0-9 and "-"');
const description = storedText().max(1000, 'must be at most 1000 characters').nullable();

const createPresetBody = z
  .object({ name, description: description.optional(), config: presetConfigSchema })
  .strict();

const patchPresetBody = z
  .object({ description: description.optional(), config: presetConfigSchema.optional() })
  .strict()
  .refine((patch) => Object.keys(patch).length > 0, 'give at least one of description, config');

const presetViewSchema = z
  .object({
    name: z.string(),
    description: z.string().nullable(),
    config: z.record(z.string(), z.unknown()),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Preset' });
const presetListSchema = z.object({ data: z.array(presetViewSchema) });
const deletedPresetSchema = presetViewSchema.extend({ deleted: z.literal(true) });

/** A preset as the API shows it (times in ISO 8601, like the keys API). */
function presetView(preset: Preset): z.output<typeof presetViewSchema> {
  return {
    name: preset.name,
    description: preset.description,
    config: preset.config,
    created_at: new Date(preset.createdAt).toISOString(),
    updated_at: new Date(preset.updatedAt).toISOString(),
  };
}

const notFound = (presetName: string) =>
  new GatewayError('not_found', `No preset "${presetName}" on this account.`);

/**
 * The presets API: an account saves named request configuration (`"model": "@preset/<name>"` uses
 * it). Any key may read presets; only a provisioning key may change them.
 */
export const presetsRoutes = [
  defineRoute({
    method: 'POST',
    path: '/v1/presets',
    operationId: 'createPreset',
    summary: 'Save a preset: a named piece of request configuration',
    tag: 'Presets',
    access: 'provisioning',
    body: createPresetBody,
    responses: { 201: { description: 'The new preset', schema: presetViewSchema } },
    async handle({ body, auth, deps }) {
      const preset = await deps.storage.createPreset({
        accountId: auth.account.id,
        name: body.name,
        description: body.description ?? null,
        config: body.config,
        now: deps.now(),
      });
      if (!preset) {
        throw new GatewayError(
          'invalid_request',
          `body.name: a preset named "${body.name}" already exists on this account; change it with PATCH /v1/presets/${body.name}.`,
        );
      }
      return deps.jsonResponse(presetView(preset), 201);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/presets',
    operationId: 'listPresets',
    summary: "List the account's presets, by name",
    tag: 'Presets',
    access: 'any',
    responses: { 200: { description: 'The presets', schema: presetListSchema } },
    async handle({ auth, deps }) {
      const presets = await deps.storage.listPresets(auth.account.id);
      return deps.jsonResponse({ data: presets.map(presetView) });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/presets/{name}',
    operationId: 'getPreset',
    summary: 'One preset of the account',
    tag: 'Presets',
    access: 'any',
    responses: { 200: { description: 'The preset', schema: presetViewSchema } },
    async handle({ params, auth, deps }) {
      const preset = await findPreset(deps.storage, auth.account.id, params.name!);
      return deps.jsonResponse(presetView(preset));
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/v1/presets/{name}',
    operationId: 'updatePreset',
    summary: 'Change the description (null clears it) or the config (a given config replaces the whole)',
    tag: 'Presets',
    access: 'provisioning',
    body: patchPresetBody,
    responses: { 200: { description: 'The updated preset', schema: presetViewSchema } },
    async handle({ params, body, auth, deps }) {
      const presetName = params.name!;
      const preset = PRESET_NAME.test(presetName)
        ? await deps.storage.updatePreset(
            auth.account.id,
            presetName,
            { description: body.description, config: body.config },
            deps.now(),
          )
        : null;
      if (!preset) throw notFound(presetName);
      return deps.jsonResponse(presetView(preset));
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/v1/presets/{name}',
    operationId: 'deletePreset',
    summary: 'Delete a preset; requests naming it then fail 404 not_found',
    tag: 'Presets',
    access: 'provisioning',
    responses: { 200: { description: 'The deleted preset', schema: deletedPresetSchema } },
    async handle({ params, auth, deps }) {
      const preset = await findPreset(deps.storage, auth.account.id, params.name!);
      if (!(await deps.storage.deletePreset(auth.account.id, preset.name))) throw notFound(preset.name);
      return deps.jsonResponse({ ...presetView(preset), deleted: true });
    },
  }),
];

/** The account's preset of that name, else `404 not_found` (a name no preset can have is not looked up). */
async function findPreset(
  storage: Pick<AccountFeaturesStorage, 'getPreset'>,
  accountId: string,
  presetName: string,
): Promise<Preset> {
  const preset = PRESET_NAME.test(presetName) ? await storage.getPreset(accountId, presetName) : null;
  if (!preset) throw notFound(presetName);
  return preset;
}
