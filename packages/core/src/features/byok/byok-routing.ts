import type { GatewayDeps } from '../../gateway-deps.js';
import type { PlannedRoute } from '../../routing/walk-routes.js';

/** One provider key of the account, opened for this request only (never logged, stored or traced). */
export interface AccountProviderKey {
  keyId: string;
  apiKey: string;
  allowFallback: boolean;
}

/**
 * The account's own provider keys by provider, opened from their seals: the newest key of each
 * provider wins; one that cannot be opened (sealed under another server secret) is skipped and
 * logged by id. Read only for accounts that have any (`AuthContext.byokKeys`).
 */
export async function loadAccountProviderKeys(
  deps: Pick<GatewayDeps, 'storage' | 'byokSealer' | 'logger'>,
  accountId: string,
): Promise<Map<string, AccountProviderKey>> {
  const rows = await deps.storage.listByokKeys(accountId);
  const keys = new Map<string, AccountProviderKey>();
  // Oldest first, so a later key of the same provider replaces an earlier one.
  for (const row of rows) {
    let apiKey: string;
    try {
      apiKey = await deps.byokSealer.open(accountId, row.id, row.sealedKey);
    } catch {
      // Sealed under another server secret: unusable until added again; the paid routes serve.
      deps.logger.warn(
        { accountId, byokKeyId: row.id },
        'a BYOK key cannot be opened with this server secret',
      );
      continue;
    }
    keys.set(row.provider, { keyId: row.id, apiKey, allowFallback: row.allowFallback });
  }
  return keys;
}

/**
 * The candidate routes with the account's own keys first (product.md "BYOK routing"): every planned
 * route of a provider the account has a key for is tried first, ahead of every paid route, calling
 * that provider with the account's key. The paid routes (the deployment's own keys, the same
 * provider's included) follow only when every key in play allows fallback; otherwise a failing
 * BYOK route ends the walk. Routes of providers without an account key are left as they are.
 */
export function byokFirst(
  routes: readonly PlannedRoute[],
  keys: ReadonlyMap<string, AccountProviderKey>,
): PlannedRoute[] {
  const own: PlannedRoute[] = [];
  for (const route of routes) {
    const key = keys.get(route.endpoint.provider.id);
    if (!key) continue;
    own.push({
      model: route.model,
      endpoint: {
        ...route.endpoint,
        provider: { ...route.endpoint.provider, apiKey: key.apiKey },
        usable: true,
      },
      byok: { keyId: key.keyId, allowFallback: key.allowFallback },
    });
  }
  if (own.length === 0) return [...routes];
  const paid = routes.filter((route) => route.endpoint.usable);
  return own.every((route) => route.byok?.allowFallback) ? [...own, ...paid] : own;
}
