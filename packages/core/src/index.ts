export { type CreateKeyInput, createApiKey } from './admin/accounts/create-key.js';
export { topUpAccount, topUpEntries } from './admin/accounts/top-up.js';
export { capSpentMicros, keyView } from './admin/keys/key-view.js';
export { ledgerEntryView } from './admin/records/ledger-route.js';
export {
  displayPrefix,
  hashApiKey,
  KEY_PREFIXES,
  keyEnvOf,
  type MintedKey,
  mintApiKey,
} from './auth/api-key.js';
export { AuthCache, DEFAULT_AUTH_CACHE_MS } from './auth/auth-cache.js';
export { type AuthContext, authenticate, requireScope } from './auth/authenticate.js';
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
  MODEL_TYPES,
  type ModelType,
  PROVIDER_FORMATS,
  type ProviderFormat,
  parseGatewayConfig,
} from './catalogue/config-schema.js';
export { ERROR_CODES, type ErrorCode, type ErrorType } from './errors/error-codes.js';
export { type ErrorEnvelope, errorEnvelope, GatewayError } from './errors/gateway-error.js';
export {
  addByokKey,
  byokProviderProblem,
  type NewByokKeyInput,
  newByokKeySchema,
} from './features/byok/add-byok-key.js';
export { byokKeyView } from './features/byok/byok-view.js';
export {
  apiRoutes,
  createGateway,
  type Gateway,
  type GatewayLogger,
  type GatewayOptions,
} from './gateway.js';
export { buildOpenApiDocument } from './http/openapi.js';
export { type JsonResponseMaker, jsonResponse } from './http/responses.js';
export type { GatewayDeps, Route, RouteAccess } from './http/route.js';
export { MB, tooLarge } from './http/size-caps.js';
export { newId } from './ids.js';
export {
  DAY_MS,
  LIMIT_RESETS,
  type LimitReset,
  limitResetsAt,
  limitWindow,
  utcDayStart,
  utcMonthStart,
  utcWeekStart,
} from './metering/limit-windows.js';
export { ceilDiv } from './money/ceil-div.js';
export { formatMicrosAsUsd, MICROS_PER_USD, microsToUsdNumber, parseUsdToMicros } from './money/micros.js';
export { usdMicrosSchema } from './money/usd-schema.js';
export { type BodySealer, createBodySealer, type SealPurpose } from './protections/sealed-body.js';
export { serverSecretBytes } from './protections/server-secret.js';
export { createAnthropicProvider } from './providers/anthropic/index.js';
export type * from './providers/chat-types.js';
export { createCohereProvider } from './providers/cohere/index.js';
export { createDemoProvider } from './providers/demo/index.js';
export {
  fetchHttpClient,
  type HttpClient,
  type HttpRequestInit,
  type HttpResponse,
} from './providers/http-client.js';
export type * from './providers/inference-types.js';
export { createOpenAIProvider } from './providers/openai/index.js';
export type {
  CallOptions,
  Capability,
  ChatCapability,
  CompletionResult,
  CompletionStream,
  EmbeddingsCapability,
  ImagesCapability,
  ProviderAdapter,
  RerankCapability,
  UpstreamTarget,
} from './providers/provider-adapter.js';
export { type ScriptedHttpReply, scriptedHttpResponse } from './providers/scripted-http.js';
export { UpstreamError } from './providers/upstream-error.js';
export { fullJitterBackoff } from './routing/backoff.js';
export { FakeClock } from './routing/fake-clock.js';
export {
  type PlannedRoute,
  RoutingFailed,
  systemClock,
  WalkAbandoned,
  type WalkClock,
  walkRoutes,
} from './routing/walk-routes.js';
export {
  EVERY_ACCOUNT,
  type NotifyChannel,
  PROCESS_LOCAL_CHANNEL,
  withAuthChangeFeed,
} from './storage/auth-change-feed.js';
export {
  AUTH_CHANGING_OPERATIONS,
  type AuthChange,
  type AuthChangeFeed,
  afterAuthChanges,
} from './storage/auth-changes.js';
export type * from './storage/metering-types.js';
export type * from './storage/types.js';
export { createOtlpExporter, type OtlpExporter, type RequestSpan } from './telemetry/index.js';
export type {
  RequestObserver,
  RequestSummary,
  UpstreamAttemptFailure,
} from './telemetry/request-observer.js';
