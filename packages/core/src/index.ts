export { createApiKey, type CreateKeyInput } from './accounts/create-key.js';
export { topUpAccount, topUpEntries } from './accounts/top-up.js';
export { displayPrefix, hashApiKey, KEY_PREFIXES, keyEnvOf, type MintedKey, mintApiKey } from './auth/api-key.js';
export {
  buildCatalogue,
  type Catalogue,
  type CatalogueEndpoint,
  type CatalogueModel,
  type CatalogueProvider,
  type RoutePricing,
} from './catalogue/catalogue.js';
export {
  ConfigError,
  type GatewayConfig,
  type GatewayConfigInput,
  gatewayConfigSchema,
  parseGatewayConfig,
} from './catalogue/config-schema.js';
export { createGateway, type Gateway, type GatewayLogger, type GatewayOptions } from './gateway.js';
export { newId } from './ids.js';
export { ceilDiv } from './money/ceil-div.js';
export { formatMicrosAsUsd, MICROS_PER_USD, microsToUsdNumber, parseUsdToMicros } from './money/micros.js';
export type * from './storage/types.js';
