import { GatewayError } from '../../errors/gateway-error.js';
import type { ResolveScope } from '../../http/route.js';
import { hasNul } from '../../http/stored-text.js';
import { type PlaceSystem, systemMessageFirst } from '../../pipeline/place-system.js';
import { applyPreset, presetNameOf } from './apply-preset.js';

/**
 * An inference body with the preset it names merged in (before it is validated), or the body as it
 * came when it names none. An unknown preset (or another account's) is `404 not_found`. The preset's
 * `cache: true` is carried as the body's `cache` field, a gateway field never sent upstream, unless
 * the request set `cache` itself. The preset's `system` goes where `placeSystem` says (the wire's
 * place for it; chat's by default).
 */
export async function resolvePreset(
  raw: unknown,
  { auth, deps, readOnce }: Pick<ResolveScope, 'auth' | 'deps' | 'readOnce'>,
  placeSystem: PlaceSystem = systemMessageFirst,
): Promise<unknown> {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return raw;
  const body = raw as Record<string, unknown>;
  const name = presetNameOf(body);
  if (name === null) return raw;
  // No preset name holds a NUL, and Postgres cannot even compare one: not looked up.
  const read = () => deps.storage.getPreset(auth.account.id, name);
  const preset = hasNul(name) ? null : await (readOnce ? readOnce(`preset:${name}`, read) : read());
  if (!preset)
    throw new GatewayError('not_found', `No preset "${name}" on this account (see GET /v1/presets).`);
  const applied = applyPreset(body, preset, placeSystem);
  if (applied.cache === undefined || 'cache' in body) return applied.body;
  return { ...applied.body, cache: applied.cache };
}
