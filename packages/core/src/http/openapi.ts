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

type Json = Record<string, unknown>;

/**
 * The OpenAPI 3.1 document of a route table. Built from the same zod schemas that validate
 * requests, so it grows with every route and cannot drift from the code. `serverUrl` is where the
 * paths are served from (the gateway's `basePath`, default `/`).
 *
 * Schemas named with `.meta({ id })` (and any a schema refers to itself through) become
 * `components/schemas` entries, so every `$ref` resolves against the document.
 */
export function buildOpenApiDocument(
  routes: readonly Route[],
  info: { title: string; version: string },
  serverUrl = '/',
) {
  const components = new SchemaComponents();
  const paths: Record<string, Record<string, unknown>> = {};
  const operationIds = new Set<string>();
  for (const route of routes) {
    const method = route.method.toLowerCase();
    if (operationIds.has(route.operationId)) {
      throw new Error(`Two routes share the operationId "${route.operationId}".`);
    }
    if (paths[route.path]?.[method]) throw new Error(`Two routes for ${route.method} ${route.path}.`);
    operationIds.add(route.operationId);
    const operation: Record<string, unknown> = {
      operationId: route.operationId,
      summary: route.summary,
      tags: [route.tag],
      security:
        route.access === 'public'
          ? []
          : [{ bearerAuth: [] }, ...(route.readApiKey ? [{ apiKeyHeader: [] }] : [])],
      'x-key-scope': route.access,
    };
    const parameters = [
      ...pathParameters(route.path),
      ...(route.query ? queryParameters(route.query, components) : []),
    ];
    if (parameters.length > 0) operation.parameters = parameters;
    if (route.body) {
      operation.requestBody = {
        required: true,
        content: { 'application/json': { schema: components.toSchema(route.body, 'input') } },
      };
    } else if (route.documentedBody) {
      const schema = components.toSchema(route.documentedBody.schema, 'input');
      operation.requestBody = {
        required: true,
        content: Object.fromEntries(route.documentedBody.mediaTypes.map((type) => [type, { schema }])),
      };
    }
    const responses: Record<string, unknown> = {};
    for (const [status, spec] of Object.entries(route.responses)) {
      responses[status] = spec.schema
        ? {
            description: spec.description,
            content: { 'application/json': { schema: components.toSchema(spec.schema, 'output') } },
          }
        : { description: spec.description };
    }
    responses.default = {
      description: 'Error envelope',
      content: {
        'application/json': { schema: components.toSchema(route.errorBody ?? errorEnvelopeSchema, 'output') },
      },
    };
    operation.responses = responses;
    paths[route.path] ??= {};
    paths[route.path]![method] = operation;
  }
  return {
    openapi: '3.1.0',
    info,
    servers: [{ url: serverUrl }],
    components: {
      schemas: components.sorted(),
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer' },
        // The Anthropic wire's routes also take the key as `x-api-key`.
        apiKeyHeader: { type: 'apiKey', in: 'header', name: 'x-api-key' },
      },
    },
    paths,
  };
}

const COMPONENT_REF = '#/components/schemas/';

/**
 * The `components/schemas` of one document. `z.toJSONSchema` puts a schema's named parts in its
 * own `$defs` and refers to them as `#/$defs/<id>` (and to a recursive root as `#`), which inside
 * an OpenAPI document would resolve against the document root. Each such part moves here under its
 * id and the refs are rewritten. A name already taken by a different schema (the input and output
 * shapes of one id can differ) gets a suffix, so two schemas never share a name.
 */
class SchemaComponents {
  private readonly schemas = new Map<string, Json>();

  /** `schema` as JSON Schema whose every `$ref` points into `#/components/schemas/`. */
  toSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
    const {
      $schema: _drop,
      $defs = {},
      ...root
    } = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Json & {
      $defs?: Record<string, Json>;
    };
    // Local ref → [base name, body].
    const local = new Map<string, [string, Json]>();
    for (const [name, body] of Object.entries($defs)) {
      const base = name.startsWith('__schema') ? 'Schema' : name.replace(/[^A-Za-z0-9._-]/g, '_');
      local.set(`#/$defs/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`, [base, body]);
    }
    let top: Json = root;
    if ([root, ...Object.values($defs)].some((json) => refersTo(json, '#'))) {
      // A recursive schema without an id refers to itself as `#`: it becomes a component too.
      local.set('#', ['Schema', root]);
      top = { $ref: '#' };
    }
    const names = this.place(local, io);
    return rewriteRefs(top, names);
  }

  /** Every component, by name. */
  sorted(): Record<string, Json> {
    return Object.fromEntries([...this.schemas].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  /** The schema a `$ref` to a component names. */
  resolve(json: Json): Json {
    const ref = json.$ref;
    if (typeof ref !== 'string' || !ref.startsWith(COMPONENT_REF)) return json;
    return this.schemas.get(ref.slice(COMPONENT_REF.length)) ?? json;
  }

  /**
   * Names the local defs: each takes its base name unless a different schema holds it (already in
   * the document, or another def of this call), then `<base><Io>`, `<base><Io>2`, …. A rename
   * changes the refs in the bodies that point at it, so naming repeats until nothing conflicts.
   */
  private place(local: Map<string, [string, Json]>, io: 'input' | 'output'): Map<string, string> {
    const suffix = io === 'input' ? 'Input' : 'Output';
    const attempts = new Map<string, number>([...local.keys()].map((ref) => [ref, 0]));
    for (;;) {
      const names = new Map<string, string>();
      for (const [ref, [base]] of local) {
        const n = attempts.get(ref)!;
        names.set(ref, n === 0 ? base : `${base}${suffix}${n === 1 ? '' : n}`);
      }
      const claimed = new Map<string, string>();
      const bodies = new Map<string, Json>();
      let conflict = false;
      for (const [ref, [, body]] of local) {
        const name = names.get(ref)!;
        const rewritten = rewriteRefs(body, names);
        const held = claimed.get(name) ?? (this.schemas.has(name) ? canonical(this.schemas.get(name)) : null);
        const mine = canonical(rewritten);
        if (held !== null && held !== mine) {
          attempts.set(ref, attempts.get(ref)! + 1);
          conflict = true;
          continue;
        }
        claimed.set(name, mine);
        bodies.set(name, rewritten);
      }
      if (conflict) continue;
      for (const [name, body] of bodies) if (!this.schemas.has(name)) this.schemas.set(name, body);
      return names;
    }
  }
}

/** Keywords whose values are data, not schemas: a `$ref` key inside them is not a reference. */
const DATA_KEYWORDS = new Set(['const', 'default', 'enum', 'examples', 'example']);

function rewriteRefs(json: Json, names: ReadonlyMap<string, string>): Json {
  const visit = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(visit);
    if (value === null || typeof value !== 'object') return value;
    const out: Json = {};
    for (const [key, child] of Object.entries(value)) {
      if (key === '$ref' && typeof child === 'string') {
        const name = names.get(child);
        if (name === undefined) throw new Error(`Unresolvable $ref "${child}" in a route schema.`);
        out[key] = COMPONENT_REF + name;
      } else {
        out[key] = DATA_KEYWORDS.has(key) ? child : visit(child);
      }
    }
    return out;
  };
  return visit(json) as Json;
}

function refersTo(json: unknown, ref: string): boolean {
  if (Array.isArray(json)) return json.some((item) => refersTo(item, ref));
  if (json === null || typeof json !== 'object') return false;
  return Object.entries(json).some(([key, child]) =>
    key === '$ref' ? child === ref : !DATA_KEYWORDS.has(key) && refersTo(child, ref),
  );
}

/** JSON text with object keys sorted, to compare two schemas. */
function canonical(json: unknown): string {
  return JSON.stringify(json, (_key, value: unknown) =>
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : value,
  );
}

function pathParameters(path: string) {
  return [...path.matchAll(/\{(\w+)\}/g)].map((m) => ({
    name: m[1],
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
}

function queryParameters(query: z.ZodType, components: SchemaComponents) {
  const json = components.resolve(components.toSchema(query, 'input')) as {
    properties?: Record<string, unknown>;
    required?: string[];
  };
  return Object.entries(json.properties ?? {}).map(([name, schema]) => ({
    name,
    in: 'query',
    required: json.required?.includes(name) ?? false,
    schema,
  }));
}
