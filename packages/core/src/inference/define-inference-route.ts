import type { z } from 'zod';
import { defineRoute, type Route, type RouteResponseSpec } from '../http/route.js';
import { resolvePreset } from '../presets/resolve-preset.js';
import { startRequestRecord } from '../records/request-log.js';
import type { InferenceBody, InferenceOperation } from './inference-operation.js';
import { recordRefusal, runMeteredCall } from './run-metered-call.js';

/**
 * The one way to declare an inference route: `POST <op.path>`, inference keys only, the body
 * validated by `body` once a preset it names is merged in, the handler the metered pipeline with
 * the operation — and every refusal before the handler (rpm, size, validation) recorded by the
 * pipeline, so no route can forget to. The rate-limit hit is counted with the hold (`rateLimitWithHold`).
 */
export function defineInferenceRoute<Body extends InferenceBody, Answer>(
  op: InferenceOperation<Body, Answer>,
  doc: {
    operationId: string;
    summary: string;
    body: z.ZodType;
    responses: Record<number, RouteResponseSpec>;
  },
): Route {
  return defineRoute({
    method: 'POST',
    path: op.path,
    operationId: doc.operationId,
    summary: doc.summary,
    tag: 'Inference',
    access: 'inference',
    body: doc.body,
    resolveBody: resolvePreset,
    responses: doc.responses,
    rateLimitWithHold: true,
    handle: ({ request, requestId, body, auth, deps, rateLimit }) =>
      runMeteredCall(op as InferenceOperation<Body, unknown>, {
        request,
        requestId,
        body: body as Body,
        auth,
        deps,
        ...(rateLimit ? { rateLimit } : {}),
      }),
    async onRefused({ requestId, auth, deps, body }, error) {
      const { model, preset } = (body ?? {}) as { model?: unknown; preset?: unknown };
      const record = startRequestRecord({
        requestId,
        auth,
        endpoint: op.endpoint,
        requestedModel: typeof model === 'string' ? model : null,
        stream: false,
        startedAt: deps.now(),
        preset,
      });
      await recordRefusal(deps, record, error, op.spanOperation);
    },
  });
}
