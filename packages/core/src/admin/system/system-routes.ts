import { z } from 'zod';
import { buildOpenApiDocument } from '../../http/openapi.js';
import { defineRoute, type Route } from '../../http/route.js';
import { oauthMetadataRoute } from '../oauth/oauth-metadata-route.js';
import { createHealthCheck, HEALTH_REASONS } from './health-check.js';

const unavailableSchema = z.object({ status: z.literal('unavailable'), reason: z.enum(HEALTH_REASONS) });

/**
 * `/healthz`, `/livez`, `/readyz`, `/api/openapi.json` and the OAuth metadata
 * (`/.well-known/oauth-authorization-server`), outside `/v1`. The document describes `routes` plus
 * these, served from `basePath` (`''` for the root).
 */
export function systemRoutes(apiRoutes: readonly Route[], version: string, basePath = ''): Route[] {
  let document: unknown;
  const health = createHealthCheck();
  const own: Route[] = [
    defineRoute({
      method: 'GET',
      path: '/healthz',
      operationId: 'health',
      summary: 'Whether the gateway can meter: its storage commits a write',
      tag: 'System',
      access: 'public',
      responses: {
        200: {
          description: 'Storage commits a write (probed at most about once a second)',
          schema: z.object({ status: z.literal('ok') }),
        },
        503: {
          description:
            'Storage answers but cannot write (a full disk, a read-only database), does not answer, or the latest write failed',
          schema: unavailableSchema,
        },
      },
      async handle({ deps }) {
        const result = await health(deps.storage, deps.storageFaults, deps.now());
        return deps.jsonResponse(result, result.status === 'ok' ? 200 : 503);
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/livez',
      operationId: 'liveness',
      summary: 'Whether the process runs its event loop (no storage call)',
      tag: 'System',
      access: 'public',
      responses: { 200: { description: 'Alive', schema: z.object({ status: z.literal('ok') }) } },
      handle: ({ deps }) => deps.jsonResponse({ status: 'ok' }),
    }),
    defineRoute({
      method: 'GET',
      path: '/readyz',
      operationId: 'readiness',
      summary: 'Whether to send this gateway traffic: storage commits a write and it is not draining',
      tag: 'System',
      access: 'public',
      responses: {
        200: { description: 'Ready', schema: z.object({ status: z.literal('ok') }) },
        503: {
          description: 'Draining before a shutdown, or storage failing as `/healthz` says',
          schema: z.union([z.object({ status: z.literal('draining') }), unavailableSchema]),
        },
      },
      async handle({ deps }) {
        if (deps.drain.draining) return deps.jsonResponse({ status: 'draining' }, 503);
        const result = await health(deps.storage, deps.storageFaults, deps.now());
        return deps.jsonResponse(result, result.status === 'ok' ? 200 : 503);
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
      handle({ deps }) {
        // Built on first use: the table is fixed once the gateway exists.
        const info = { title: 'Tollgate API', version };
        document ??= buildOpenApiDocument([...apiRoutes, ...own], info, basePath || '/');
        return deps.jsonResponse(document);
      },
    }),
    oauthMetadataRoute(),
  ];
  return own;
}
