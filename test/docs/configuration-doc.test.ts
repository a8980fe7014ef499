import { readFileSync } from 'node:fs';
import { gatewayConfigSchema } from '@tollgate/core';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';

const PAGE = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');

/** The parts of zod's internal definition this walk reads (zod 4's `_zod.def`). */
interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  element?: z.ZodType;
  valueType?: z.ZodType;
  options?: z.ZodType[];
  in?: z.ZodType;
  out?: z.ZodType;
}

const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: Def } })._zod.def;

/**
 * Every key path of the config schema, as the page writes them: `limits.max_request_mb`,
 * `providers.<id>.base_url` (a record's key), `models[].endpoints[].pricing.prompt` (an array's item).
 * Wrappers (optional, default, pipe, …) are looked through; every member of a union is walked.
 */
function keyPaths(schema: z.ZodType, prefix = '', out = new Set<string>()): Set<string> {
  const def = defOf(schema);
  switch (def.type) {
    case 'object':
      for (const [key, child] of Object.entries(def.shape ?? {})) {
        const path = prefix ? `${prefix}.${key}` : key;
        out.add(path);
        keyPaths(child, path, out);
      }
      break;
    case 'record':
      if (def.valueType) keyPaths(def.valueType, `${prefix}.<id>`, out);
      break;
    case 'array':
      if (def.element) keyPaths(def.element, `${prefix}[]`, out);
      break;
    case 'union':
      for (const option of def.options ?? []) keyPaths(option, prefix, out);
      break;
    case 'pipe':
      if (def.in) keyPaths(def.in, prefix, out);
      if (def.out) keyPaths(def.out, prefix, out);
      break;
    default:
      if (def.innerType) keyPaths(def.innerType, prefix, out);
  }
  return out;
}

/** The field paths the page's reference tables list (a row's first cell), up to the environment section. */
function documentedPaths(page: string): Set<string> {
  const reference = page.slice(page.indexOf('## Every field'), page.indexOf('## Environment variables'));
  const paths = new Set<string>();
  for (const match of reference.matchAll(/^\| `([^`]+)` \|/gm)) paths.add(match[1] as string);
  return paths;
}

describe('docs/configuration.md', () => {
  const schemaPaths = keyPaths(gatewayConfigSchema);

  it('walks the whole schema (a sanity floor, so a broken walk cannot pass vacuously)', () => {
    expect(schemaPaths).toContain('providers.<id>.max_tokens_field');
    expect(schemaPaths).toContain('models[].endpoints[].pricing.cache_write');
    expect(schemaPaths).toContain('oauth.client_credentials_ttl_s');
    expect(schemaPaths.size).toBeGreaterThan(40);
  });

  it('documents every field of the config schema in its reference tables', () => {
    const documented = documentedPaths(PAGE);
    const missing = [...schemaPaths].filter((path) => !documented.has(path));
    expect(missing, `fields missing from docs/configuration.md: ${missing.join(', ')}`).toEqual([]);
  });

  it('lists no field the schema does not have', () => {
    const stale = [...documentedPaths(PAGE)].filter((path) => !schemaPaths.has(path));
    expect(stale, `docs/configuration.md lists fields the schema lacks: ${stale.join(', ')}`).toEqual([]);
  });

  it('names every environment variable the server reads', () => {
    for (const name of [
      'TOLLGATE_CONFIG',
      'DATABASE_URL',
      'PORT',
      'HOST',
      'TOLLGATE_SECRET',
      'TOLLGATE_DRAIN_DELAY_MS',
      'TOLLGATE_GRACE_MS',
      'TOLLGATE_DB_TIMEOUT_MS',
      'TOLLGATE_HEAP_GROWING_PERCENT',
      'LOG_LEVEL',
      'LOG_FORMAT',
      'NO_COLOR',
      'OTEL_EXPORTER_OTLP_ENDPOINT',
    ]) {
      expect(PAGE, name).toContain(`\`${name}\``);
    }
  });
});
