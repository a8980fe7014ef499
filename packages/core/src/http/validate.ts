import type { z } from 'zod';
import { GatewayError } from '../errors/gateway-error.js';

/**
 * Validates input against a route schema; a failure is `400 invalid_request` whose message names
 * each offending field (`body.name: …`). Only field names and rules are quoted, never values.
 */
export function validate<S extends z.ZodType>(
  schema: S,
  input: unknown,
  where: 'body' | 'query',
): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const field = [where, ...issue.path.map(String)].join('.');
    return `${field}: ${issue.message}`;
  });
  throw new GatewayError('invalid_request', `Invalid request ${where}. ${problems.join('; ')}`);
}

/** The query string as a plain object (first value of each name). */
export function queryObject(url: URL): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of url.searchParams) if (!(name in out)) out[name] = value;
  return out;
}
