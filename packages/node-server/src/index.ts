export type { CliIo } from './cli/cli-io.js';
export { runCli } from './cli/run-cli.js';
export {
  ConfigFileError,
  DEFAULT_CONFIG_FILE,
  EXAMPLE_CONFIG_PATH,
  type LoadConfigOptions,
  type LoadedConfig,
  loadConfigFile,
} from './config-file.js';
export {
  type DashboardAsset,
  type DashboardAssets,
  dashboardDistDir,
  loadDashboardAssets,
} from './dashboard/dashboard-assets.js';
export { createDashboardEndpoint, DASHBOARD_CSP, DASHBOARD_PATH } from './dashboard/dashboard-endpoint.js';
export {
  DEMO_CREDIT_MICROS,
  type FirstStartResult,
  formatFirstStartBanner,
  provisionFirstStart,
} from './first-start.js';
export { bufferedJsonResponse } from './http/buffered-json-response.js';
export {
  type FetchHandler,
  type NodeHandler,
  type NodeHandlerOptions,
  toNodeHandler,
} from './http/node-adapter.js';
export {
  createUndiciHttpClient,
  type UndiciHttpClient,
  type UndiciHttpClientOptions,
} from './http/undici-http-client.js';
export {
  createLogger,
  LOG_FORMATS,
  LOG_LEVELS,
  type LogFormat,
  type LogLevel,
  LogSettingError,
  parseLogFormat,
  parseLogLevel,
} from './logger.js';
export { GatewayMetrics, type GatewayMetricsOptions } from './observability/gateway-metrics.js';
export {
  createMetricsEndpoint,
  METRICS_PATH,
  type MetricsEndpointOptions,
} from './observability/metrics-endpoint.js';
export {
  accessLine,
  createServerObserver,
  type ServerObserverOptions,
} from './observability/server-observer.js';
export {
  createServerTelemetry,
  type ServerTelemetry,
  type ServerTelemetryOptions,
} from './observability/server-telemetry.js';
export { DEFAULT_DB, openStorage, resolveStorageTarget, type StorageTarget } from './open-storage.js';
export { type RunningServer, type StartServerOptions, startServer } from './server.js';
