import SwaggerParser from '@apidevtools/swagger-parser';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { systemRoutes } from '../admin/system/system-routes.js';
import { buildCatalogue } from '../catalogue/catalogue.js';
import { parseGatewayConfig } from '../catalogue/config-schema.js';
import { apiRoutes, createGateway } from '../gateway.js';
import type { Storage } from '../storage/types.js';
import { buildOpenApiDocument } from './openapi.js';
import { defineRoute, type Route } from './route.js';

// `/api/openapi.json` is public and never touches storage.
const storage = {} as Storage;
const catalogue = buildCatalogue(parseGatewayConfig({ providers: {}, models: [] }), {});
const silent = { info() {}, warn() {}, error() {} };

interface Operation {
  operationId: string;
  parameters?: unknown[];
  responses: Record<string, unknown>;
}

interface Document {
  openapi: string;
  components: { schemas: Record<string, unknown> };
  paths: Record<string, Record<string, Operation>>;
}

const info = { title: 'Test', version: '0' };
const build = (routes: Route[]) => buildOpenApiDocument(routes, info) as unknown as Document;

async function servedDocument(): Promise<Document> {
  const gateway = createGateway(storage, catalogue, { logger: silent });
  const response = await gateway.fetch(new Request('http://gateway.test/api/openapi.json'));
  expect(response.status).toBe(200);
  return (await response.json()) as Document;
}

/** Throws with every problem the validator finds. It dereferences in place, so it gets a copy. */
async function expectValid(document: Document): Promise<void> {
  await SwaggerParser.validate(structuredClone(document) as never);
}

/** Every `$ref` value anywhere in `json`. */
function refsIn(json: unknown): string[] {
  if (Array.isArray(json)) return json.flatMap(refsIn);
  if (json === null || typeof json !== 'object') return [];
  return Object.entries(json).flatMap(([key, value]) =>
    key === '$ref' && typeof value === 'string' ? [value] : refsIn(value),
  );
}

/** Every `$ref` names an existing `components/schemas` entry, and no schema keeps `$defs`. */
function expectRefsResolve(document: Document): void {
  const schemas = document.components.schemas;
  for (const ref of refsIn(document)) {
    expect(ref).toMatch(/^#\/components\/schemas\/[A-Za-z0-9._-]+$/);
    expect(schemas, ref).toHaveProperty([ref.slice('#/components/schemas/'.length)]);
  }
  expect(JSON.stringify(document)).not.toContain('"$defs"');
}

function operations(document: Document): { key: string; operationId: string }[] {
  return Object.entries(document.paths).flatMap(([path, byMethod]) =>
    Object.entries(byMethod).map(([method, operation]) => ({
      key: `${method.toUpperCase()} ${path}`,
      operationId: operation.operationId,
    })),
  );
}

const route = (overrides: Partial<Route> & Pick<Route, 'path' | 'operationId'>): Route =>
  defineRoute({
    method: 'GET',
    summary: overrides.operationId,
    tag: 'Test',
    access: 'public',
    responses: { 200: { description: 'OK' } },
    handle: () => new Response(null),
    ...overrides,
  });

describe('GET /api/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document whose every $ref resolves inside components', async () => {
    const document = await servedDocument();
    expect(document.openapi).toBe('3.1.0');
    await expectValid(document);
    expectRefsResolve(document);
    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining(['ErrorEnvelope', 'Model', 'Pricing', 'ApiKey', 'ChatCompletionRequest']),
    );
  });

  it('describes every route of the table under its method, with a unique operationId', async () => {
    const document = await servedDocument();
    const described = operations(document);
    const table = [...apiRoutes, ...systemRoutes(apiRoutes, '0')];
    expect(described.map((o) => o.key).sort()).toEqual(table.map((r) => `${r.method} ${r.path}`).sort());
    const ids = described.map((o) => o.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('buildOpenApiDocument', () => {
  it('describes a route added without any schema', async () => {
    const document = build([route({ path: '/v1/bare/{id}', operationId: 'bare' })]);
    await expectValid(document);
    expect(document.paths['/v1/bare/{id}']?.get).toMatchObject({
      operationId: 'bare',
      parameters: [{ name: 'id', in: 'path', required: true }],
    });
  });

  it('gives the input and output shapes of one id two names when they differ', async () => {
    const shape = z.object({ n: z.int().default(1) }).meta({ id: 'OpenApiTestDefaulted' });
    const document = build([
      route({
        method: 'POST',
        path: '/x',
        operationId: 'x',
        body: shape,
        responses: { 200: { description: 'x', schema: shape } },
      }),
    ]);
    await expectValid(document);
    expectRefsResolve(document);
    const { schemas } = document.components;
    expect(schemas.OpenApiTestDefaulted).not.toHaveProperty('required');
    expect(schemas.OpenApiTestDefaultedOutput).toMatchObject({ required: ['n'] });
  });

  it('keeps two different schemas that share an id apart, and shares identical ones', async () => {
    const a = z.object({ a: z.string() }).meta({ id: 'OpenApiTestShared' });
    const b = z.object({ b: z.number() }).meta({ id: 'OpenApiTestShared' });
    const document = build([
      route({ path: '/a', operationId: 'a', responses: { 200: { description: 'a', schema: a } } }),
      route({ path: '/b', operationId: 'b', responses: { 200: { description: 'b', schema: b } } }),
      route({ path: '/c', operationId: 'c', responses: { 200: { description: 'c', schema: z.array(a) } } }),
    ]);
    await expectValid(document);
    expectRefsResolve(document);
    const refOf = (path: string) => refsIn(document.paths[path]?.get?.responses)[0];
    expect(refOf('/a')).toBe('#/components/schemas/OpenApiTestShared');
    expect(refOf('/b')).toBe('#/components/schemas/OpenApiTestSharedOutput');
    expect(refOf('/c')).toBe('#/components/schemas/OpenApiTestShared');
  });

  it('moves a recursive schema without an id into components', async () => {
    const tree = z.object({
      name: z.string(),
      get children() {
        return z.array(tree);
      },
    });
    const document = build([
      route({ path: '/tree', operationId: 'tree', responses: { 200: { description: 't', schema: tree } } }),
    ]);
    await expectValid(document);
    expectRefsResolve(document);
    expect(document.paths['/tree']?.get).toMatchObject({
      responses: {
        200: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Schema' } } } },
      },
    });
  });

  it('lists the parameters of a query schema that has an id', async () => {
    const query = z
      .object({ limit: z.string(), after: z.string().optional() })
      .meta({ id: 'OpenApiTestQuery' });
    const document = build([route({ path: '/q', operationId: 'q', query })]);
    await expectValid(document);
    expect(document.paths['/q']?.get).toMatchObject({
      parameters: [
        { name: 'limit', in: 'query', required: true },
        { name: 'after', in: 'query', required: false },
      ],
    });
  });

  it('refuses a table with a repeated operationId or method and path', () => {
    expect(() =>
      build([route({ path: '/a', operationId: 'same' }), route({ path: '/b', operationId: 'same' })]),
    ).toThrow(/operationId "same"/);
    expect(() =>
      build([route({ path: '/a', operationId: 'a' }), route({ path: '/a', operationId: 'b' })]),
    ).toThrow(/GET \/a/);
  });
});
