import type { Feature } from '../../pipeline/feature.js';
import { byokRoutes } from './byok-routes.js';
import { type AccountProviderKey, byokFirst, loadAccountProviderKeys } from './byok-routing.js';

/**
 * BYOK: `/v1/byok`, and the account's own provider keys at stage `plan` — their providers reachable
 * though the deployment has no key, their routes first (`byokFirst`). The walk, the worst case and
 * the price read the mark on those routes (`PlannedRoute.byok`).
 */
export const byokFeature: Feature = {
  name: 'byok',
  routes: byokRoutes,
  open({ auth, deps }) {
    // Accounts without keys cost no read.
    if (auth.byokKeys === 0) return null;
    let keys: Map<string, AccountProviderKey> | null = null;
    return {
      reachable: async () => {
        keys = await loadAccountProviderKeys(deps, auth.account.id);
        return new Set(keys.keys());
      },
      routes: (routes) => (keys ? byokFirst(routes, keys) : routes),
    };
  },
};
