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
  DEMO_CREDIT_MICROS,
  type FirstStartResult,
  formatFirstStartBanner,
  provisionFirstStart,
} from './first-start.js';
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
export { createLogger } from './logger.js';
export { DEFAULT_DB, openStorage, resolveStorageTarget, type StorageTarget } from './open-storage.js';
export { type RunningServer, type StartServerOptions, startServer } from './server.js';
