import type {
  Catalogue,
  CatalogueEndpoint,
  CatalogueModel,
  CatalogueProvider,
} from '../catalogue/catalogue.js';
import type { ModelType } from '../catalogue/config-schema.js';
import { GatewayError } from '../errors/gateway-error.js';
import { type EndpointObservation, endpointKey } from './endpoint-stats.js';
import type { PlannedRoute } from './walk-routes.js';

type SortBy = 'price' | 'throughput' | 'latency';

/** The routing fields of a chat request, validated. */
interface RoutingPreferences {
  /** The requested model id, then the `models` fallback chain, each possibly ending in `:free`. */
  modelIds: string[];
  order: string[];
  ignore: string[];
  only: string[] | null;
  sort: SortBy | null;
  allowFallbacks: boolean;
}

const FREE_SUFFIX = ':free';
const SORTS: readonly SortBy[] = ['price', 'throughput', 'latency'];

/**
 * Reads `model`, `models` and `provider` of a chat request into routing preferences; an unusable
 * value is `400 invalid_request` naming the field. Unknown keys inside `provider` are ignored, as
 * other gateways' fields (e.g. `data_collection`) may be sent by configurations written for them.
 */
export function readRoutingPreferences(
  body: Record<string, unknown>,
  providerIds: Iterable<string>,
): RoutingPreferences {
  const known = new Map([...providerIds].map((id) => [id.toLowerCase(), id]));
  const modelIds = [body.model as string];
  if (body.models !== undefined) {
    if (!Array.isArray(body.models) || !body.models.every((m) => typeof m === 'string' && m.length > 0)) {
      throw invalid('models', 'must be an array of model ids');
    }
    for (const id of body.models as string[]) if (!modelIds.includes(id)) modelIds.push(id);
  }
  const provider = body.provider;
  if (provider === undefined || provider === null) {
    return { modelIds, order: [], ignore: [], only: null, sort: null, allowFallbacks: true };
  }
  if (typeof provider !== 'object' || Array.isArray(provider)) throw invalid('provider', 'must be an object');
  const p = provider as Record<string, unknown>;
  const ids = (field: string): string[] | null => {
    const value = p[field];
    if (value === undefined || value === null) return null;
    if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
      throw invalid(`provider.${field}`, 'must be an array of provider ids');
    }
    return value.map((v: string) => {
      const id = known.get(v.toLowerCase());
      if (!id) throw invalid(`provider.${field}`, `"${v}" is not a provider of this gateway`);
      return id;
    });
  };
  if (p.allow_fallbacks !== undefined && typeof p.allow_fallbacks !== 'boolean') {
    throw invalid('provider.allow_fallbacks', 'must be a boolean');
  }
  return {
    modelIds,
    order: ids('order') ?? [],
    ignore: ids('ignore') ?? [],
    only: ids('only'),
    sort: readSort(p.sort),
    allowFallbacks: p.allow_fallbacks !== false,
  };
}

function readSort(value: unknown): SortBy | null {
  if (value === undefined || value === null) return null;
  const by =
    typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>).by : value;
  if (typeof by === 'string' && (SORTS as readonly string[]).includes(by)) return by as SortBy;
  throw invalid('provider.sort', `must be one of ${SORTS.join(', ')} (or {"by": …})`);
}

export interface RoutePlan {
  /** The model the caller asked for (its catalogue entry). */
  requested: CatalogueModel;
  routes: PlannedRoute[];
}

/**
 * The candidate list (spec routing rule 1): every usable endpoint of the requested model, then of
 * each model in `models`, in order. Within a model: catalogue order, then `provider.order` first,
 * without `provider.ignore`, only `provider.only`, sorted by `provider.sort` (stable, so ties keep
 * catalogue order). `:free` keeps zero-price endpoints only; `allow_fallbacks: false` keeps the
 * first usable route only. Only models of the endpoint's type are candidates, and only endpoints
 * whose provider serves its capability. Refusals: unknown model → 404 `model_not_found`; a model
 * of another type → 400 naming its type; tools on a model
 * without tool calling → 400; `:free` and no zero-price route → 402 `no_free_route`; nothing usable
 * → 503 `no_provider_available`.
 */
export function planRoutes(
  catalogue: Catalogue,
  prefs: RoutingPreferences,
  options: {
    usesTools: boolean;
    /** The model type the endpoint serves; a model of another type is refused. */
    modelType: ModelType;
    /** The endpoint's path, for the refusal's message. */
    path: string;
    /** Whether a provider's adapter offers the endpoint's capability; other providers are skipped. */
    serves: (provider: CatalogueProvider) => boolean;
    /**
     * Providers this call reaches without the deployment's key (a hook's: the account's own keys):
     * their endpoints are usable though the deployment has no key for them.
     */
    reachableProviders?: ReadonlySet<string>;
    observe: (key: string) => EndpointObservation | undefined;
  },
): RoutePlan {
  const models = prefs.modelIds.map((id) => {
    const free = id.endsWith(FREE_SUFFIX);
    const baseId = free ? id.slice(0, -FREE_SUFFIX.length) : id;
    const model = catalogue.model(baseId) ?? catalogue.model(id);
    if (!model)
      throw new GatewayError('model_not_found', `No model "${id}" in the catalogue (see GET /v1/models).`);
    if (model.type !== options.modelType) {
      throw new GatewayError(
        'invalid_request',
        `Model "${model.id}" is ${article(model.type)} ${model.type} model; ${options.path} serves ${options.modelType} models.`,
      );
    }
    return { model, free: free && model.id !== id };
  });
  const requested = models[0]!.model;
  if (options.usesTools && !requested.capabilities.tools) {
    throw new GatewayError(
      'invalid_request',
      `Model "${requested.id}" does not support tool calling (capabilities.tools is false); remove "tools" or choose another model.`,
    );
  }

  const routes: PlannedRoute[] = [];
  let freeAsked = false;
  let freeFound = false;
  for (const { model, free } of models) {
    if (options.usesTools && !model.capabilities.tools) continue;
    let endpoints = model.endpoints.filter(
      (e) => (e.usable || options.reachableProviders?.has(e.provider.id)) && options.serves(e.provider),
    );
    endpoints = preferOrder(endpoints, prefs.order);
    endpoints = endpoints.filter((e) => !prefs.ignore.includes(e.provider.id));
    if (prefs.only) endpoints = endpoints.filter((e) => prefs.only!.includes(e.provider.id));
    if (prefs.sort) endpoints = sortEndpoints(endpoints, prefs.sort, options.observe);
    if (free) {
      freeAsked = true;
      endpoints = endpoints.filter(isZeroPrice);
      if (endpoints.length > 0) freeFound = true;
    }
    for (const endpoint of endpoints) routes.push({ model, endpoint });
  }

  if (routes.length === 0) {
    if (freeAsked && !freeFound) {
      throw new GatewayError('no_free_route', `No zero-cost route serves "${prefs.modelIds[0]}".`);
    }
    throw new GatewayError(
      'no_provider_available',
      `Model "${requested.id}" exists but this deployment has no usable provider for it (no adapter or no API key, or all excluded by "provider").`,
    );
  }
  return { requested, routes: prefs.allowFallbacks ? routes : routes.slice(0, 1) };
}

function preferOrder(endpoints: CatalogueEndpoint[], order: string[]): CatalogueEndpoint[] {
  if (order.length === 0) return endpoints;
  const rank = (e: CatalogueEndpoint) => {
    const i = order.indexOf(e.provider.id);
    return i === -1 ? order.length : i;
  };
  return [...endpoints].sort((a, b) => rank(a) - rank(b));
}

function sortEndpoints(
  endpoints: CatalogueEndpoint[],
  by: SortBy,
  observe: (key: string) => EndpointObservation | undefined,
): CatalogueEndpoint[] {
  const metric = (e: CatalogueEndpoint): number => {
    // The lines a model type leaves out are 0, so this is the price its type is charged in.
    if (by === 'price') return e.pricing.prompt + e.pricing.completion + e.pricing.image + e.pricing.search;
    const seen = observe(endpointKey(e.provider.id, e.upstreamModel));
    // Unobserved endpoints go after observed ones, in catalogue order.
    if (by === 'latency') return seen ? seen.latencyMs : Number.POSITIVE_INFINITY;
    return seen?.tokensPerSecond != null ? -seen.tokensPerSecond : Number.POSITIVE_INFINITY;
  };
  return [...endpoints].sort((a, b) => metric(a) - metric(b) || 0);
}

function isZeroPrice(e: CatalogueEndpoint): boolean {
  const p = e.pricing;
  return (
    p.prompt === 0 &&
    p.completion === 0 &&
    (p.cachedPrompt ?? 0) === 0 &&
    (p.cacheWrite ?? 0) === 0 &&
    p.image === 0 &&
    p.search === 0
  );
}

function article(word: string): string {
  return /^[aeiou]/.test(word) ? 'an' : 'a';
}

function invalid(field: string, problem: string): GatewayError {
  return new GatewayError('invalid_request', `body.${field}: ${problem}.`);
}
