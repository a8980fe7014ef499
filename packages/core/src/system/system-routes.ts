import { z } from 'zod';
import { buildOpenApiDocument } from '../http/openapi.js';
import { jsonResponse } from '../http/responses.js';
import { defineRoute, type Route } from '../http/route.js';

/** `/healthz` and `/api/openapi.json`, outside `/v1`. The document describes `routes` plus these two. */
export function systemRoutes(apiRoutes: readonly Route[], version: string): Route[] {
  let document: unknown;
  const own: Route[] = [
    defineRoute({
      method: 'GET',
      path: '/healthz',
      operationId: 'health',
      summary: 'Liveness and storage reachability',
      tag: 'System',
      access: 'public',
      responses: {
        200: { description: 'Storage answers', schema: z.object({ status: z.literal('ok') }) },
        503: {
          description: 'Storage does not answer',
          schema: z.object({ status: z.literal('unavailable') }),
        },
      },
      async handle({ deps }) {
        try {
          await deps.storage.ping();
          return jsonResponse({ status: 'ok' });
        } catch {
          return jsonResponse({ status: 'unavailable' }, 503);
        }
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/openapi.json',
      operationId: 'openapi',
      summary: 'This document (OpenAPI 3.1)',
      tag: 'System',
      access: 'public',
      responses: { 200: { description: 'OpenAPI 3.1 document' } },
      handle() {
        // Built on first use: the table is fixed once the gateway exists.
        document ??= buildOpenApiDocument([...apiRoutes, ...own], { title: 'Tollgate API', version });
        return jsonResponse(document);
      },
    }),
  ];
  return own;
}
