import { z } from 'zod';
import { ERROR_CODES } from '../errors/error-codes.js';
import type { Route } from './route.js';

const errorEnvelopeSchema = z
  .object({
    error: z.object({
      message: z.string(),
      type: z.string(),
      code: z.enum(Object.keys(ERROR_CODES) as [keyof typeof ERROR_CODES, ...(keyof typeof ERROR_CODES)[]]),
      request_id: z.string(),
    }),
  })
  .meta({ id: 'ErrorEnvelope' });

/**
 * The OpenAPI 3.1 document of a route table. Built from the same zod schemas that validate
 * requests, so it grows with every route and cannot drift from the code.
 */
export function buildOpenApiDocument(routes: readonly Route[], info: { title: string; version: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const operation: Record<string, unknown> = {
      operationId: route.operationId,
      summary: route.summary,
      tags: [route.tag],
      security: route.access === 'public' ? [] : [{ bearerAuth: [] }],
      'x-key-scope': route.access,
    };
    const parameters = [...pathParameters(route.path), ...(route.query ? queryParameters(route.query) : [])];
    if (parameters.length > 0) operation.parameters = parameters;
    if (route.body) {
      operation.requestBody = {
        required: true,
        content: { 'application/json': { schema: toSchema(route.body, 'input') } },
      };
    }
    const responses: Record<string, unknown> = {};
    for (const [status, spec] of Object.entries(route.responses)) {
      responses[status] = spec.schema
        ? {
            description: spec.description,
            content: { 'application/json': { schema: toSchema(spec.schema, 'output') } },
          }
        : { description: spec.description };
    }
    responses.default = {
      description: 'Error envelope',
      content: { 'application/json': { schema: toSchema(errorEnvelopeSchema, 'output') } },
    };
    operation.responses = responses;
    paths[route.path] ??= {};
    paths[route.path]![route.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info,
    servers: [{ url: '/' }],
    components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } },
    paths,
  };
}

function toSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _drop, ...json } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
  });
  return json;
}

function pathParameters(path: string) {
  return [...path.matchAll(/\{(\w+)\}/g)].map((m) => ({
    name: m[1],
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
}

function queryParameters(query: z.ZodType) {
  const json = toSchema(query, 'input') as { properties?: Record<string, unknown>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, schema]) => ({
    name,
    in: 'query',
    required: json.required?.includes(name) ?? false,
    schema,
  }));
}
