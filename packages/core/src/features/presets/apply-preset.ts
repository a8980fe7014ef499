import { GatewayError } from '../../errors/gateway-error.js';
import { type PlaceSystem, systemMessageFirst } from '../../pipeline/place-system.js';
import type { Preset } from '../../storage/account-features.js';

/** A request names a preset with `"model": "@preset/<name>"` (or with `"preset": "<name>"`). */
export const PRESET_MODEL_PREFIX = '@preset/';

/** A request body with a preset applied, and the preset's `cache` opt-in (never part of the body). */
export interface AppliedPreset {
  body: Record<string, unknown>;
  /** The preset's `cache` when it sets one; the request's own `X-Gateway-Cache` header decides otherwise. */
  cache: boolean | undefined;
}

/**
 * The preset a request body names, or `null`: `"model": "@preset/<name>"`, or `"preset": "<name>"`
 * beside a model. Both at once must agree. Throws `400 invalid_request` for a `preset` that is not
 * a string, an empty name, or two different names. Whether the preset exists is the caller's look-up.
 */
export function presetNameOf(body: Record<string, unknown>): string | null {
  const { model, preset } = body;
  const fromModel =
    typeof model === 'string' && model.startsWith(PRESET_MODEL_PREFIX)
      ? model.slice(PRESET_MODEL_PREFIX.length)
      : null;
  if (fromModel === '') {
    throw new GatewayError(
      'invalid_request',
      `body.model: "${PRESET_MODEL_PREFIX}" must be followed by a preset name.`,
    );
  }
  // `null` is "no preset", as clients that send every field of their config do.
  if (preset === undefined || preset === null) return fromModel;
  if (typeof preset !== 'string' || preset === '') {
    throw new GatewayError(
      'invalid_request',
      'body.preset: must be the name of a preset (a non-empty string).',
    );
  }
  if (fromModel !== null && fromModel !== preset) {
    throw new GatewayError(
      'invalid_request',
      `body.preset: "${preset}" and body.model "${PRESET_MODEL_PREFIX}${fromModel}" name two different presets.`,
    );
  }
  return preset;
}

/**
 * Merges a preset into a request body: shallowly, the request winning for every key it gives,
 * except that `"model": "@preset/<name>"` becomes the preset's `model`. The preset's `system`
 * goes where `placeSystem` puts it (chat: a system message first, before the request's own); its
 * `cache` is returned apart. The result carries `preset: <name>`, a gateway field that is never
 * sent upstream. Throws `400 invalid_request` when the request's model is the preset reference
 * and the preset names no model. Pure: neither input is changed.
 */
export function applyPreset(
  body: Record<string, unknown>,
  preset: Pick<Preset, 'name' | 'config'>,
  placeSystem: PlaceSystem = systemMessageFirst,
): AppliedPreset {
  const { system, cache, ...defaults } = preset.config;
  const merged: Record<string, unknown> = { ...defaults, ...body };
  if (typeof body.model === 'string' && body.model.startsWith(PRESET_MODEL_PREFIX)) {
    if (typeof defaults.model !== 'string') {
      throw new GatewayError(
        'invalid_request',
        `body.model: the preset "${preset.name}" names no model; give one with "model" and ` +
          `"preset": "${preset.name}", or add a model to the preset.`,
      );
    }
    merged.model = defaults.model;
  }
  if (typeof system === 'string') placeSystem(merged, system);
  merged.preset = preset.name;
  return { body: merged, cache: typeof cache === 'boolean' ? cache : undefined };
}
