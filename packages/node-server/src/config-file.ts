import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  buildCatalogue,
  type Catalogue,
  ConfigError,
  type GatewayConfig,
  parseGatewayConfig,
} from '@tollgate/core';

/**
 * The example config shipped with the package. `src/` and `dist/` sit at the same depth, so the
 * same relative URL finds it from the sources (tsx, vitest) and from the build.
 */
export const EXAMPLE_CONFIG_PATH = fileURLToPath(new URL('../tollgate.config.example.json', import.meta.url));

/** The config file looked for when neither `--config` nor `TOLLGATE_CONFIG` names one. */
export const DEFAULT_CONFIG_FILE = 'tollgate.config.json';

export interface LoadConfigOptions {
  /** `--config FILE`; wins over `TOLLGATE_CONFIG`. */
  path?: string;
  env?: Record<string, string | undefined>;
  /** Relative paths are resolved against it. Default: `process.cwd()`. */
  cwd?: string;
}

export interface LoadedConfig {
  /** Absolute path of the file that was read. */
  path: string;
  /** `example` when no config was named and `./tollgate.config.json` does not exist. */
  source: 'flag' | 'env' | 'default' | 'example';
  config: GatewayConfig;
  catalogue: Catalogue;
}

/** A config file that cannot be used; the message names the file and, for schema errors, each JSON path. */
export class ConfigFileError extends Error {
  constructor(
    readonly path: string,
    detail: string,
  ) {
    super(`invalid config file ${path}:${detail.startsWith('\n') ? '' : ' '}${detail}`);
    this.name = 'ConfigFileError';
  }
}

/**
 * Finds, reads and validates the config file (`--config`, else `TOLLGATE_CONFIG`, else
 * `./tollgate.config.json`, else the bundled example), applies `OTEL_EXPORTER_OTLP_ENDPOINT` when the
 * file names no OTLP endpoint, and resolves provider keys from `env` into a catalogue.
 * Throws `ConfigFileError`.
 */
export function loadConfigFile(options: LoadConfigOptions = {}): LoadedConfig {
  const env = options.env ?? {};
  const { path, source } = locateConfigFile(options.path, env, options.cwd ?? process.cwd());
  const config = readConfig(path);
  const otlpFromEnv = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!config.otlp?.endpoint && otlpFromEnv) {
    if (!URL.canParse(otlpFromEnv)) {
      throw new ConfigFileError(path, `OTEL_EXPORTER_OTLP_ENDPOINT "${otlpFromEnv}" is not a URL`);
    }
    config.otlp = { timeout_ms: config.otlp?.timeout_ms ?? 1000, endpoint: otlpFromEnv };
  }
  return { path, source, config, catalogue: buildCatalogue(config, env) };
}

function locateConfigFile(
  flag: string | undefined,
  env: Record<string, string | undefined>,
  cwd: string,
): { path: string; source: LoadedConfig['source'] } {
  if (flag) return { path: resolve(cwd, flag), source: 'flag' };
  if (env.TOLLGATE_CONFIG) return { path: resolve(cwd, env.TOLLGATE_CONFIG), source: 'env' };
  const local = resolve(cwd, DEFAULT_CONFIG_FILE);
  if (existsSync(local)) return { path: local, source: 'default' };
  return { path: EXAMPLE_CONFIG_PATH, source: 'example' };
}

function readConfig(path: string): GatewayConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigFileError(path, code === 'ENOENT' ? 'file not found' : (error as Error).message);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ConfigFileError(path, `not valid JSON (${(error as Error).message})`);
  }
  try {
    return parseGatewayConfig(json);
  } catch (error) {
    if (error instanceof ConfigError) {
      throw new ConfigFileError(
        path,
        `\n${error.issues.map((i) => `  at ${i.path}: ${i.message}`).join('\n')}`,
      );
    }
    throw error;
  }
}
