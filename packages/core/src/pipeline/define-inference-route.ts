import type { z } from 'zod';
import type { AuthContext } from '../auth/authenticate.js';
import type { GatewayDeps } from '../gateway-deps.js';
import { defineRoute, type Route, type RouteResponseSpec } from '../http/route.js';
import { refuseBeforeHold } from '../metering/before-hold.js';
import { featuresOf } from './features-of.js';
import type { InferenceBody, InferenceOperation } from './inference-operation.js';
import { type PlaceSystem, systemMessageFirst } from './place-system.js';
import { startRequestRecord } from './request-log.js';
import { resolveBody } from './run-hooks.js';
import { recordRefusal, runMeteredCall } from './run-metered-call.js';

/**
 * A wire skin's entry: the validated body of a wire that is not the operation's own (the Responses
 * or Messages API) converted at the edge into the operation that serves this request and its body,
 * plus headers for the answer (set once the pipeline answered, so the operation may still change
 * them while it serves). `deps` gives the catalogue a conversion may depend on. Throws a
 * `GatewayError` for a body the conversion refuses.
 */
export type WireEntry<Body extends InferenceBody> = (
  wire: unknown,
  request: Request,
  deps: GatewayDeps,
) => { op: InferenceOperation<Body>; body: Body; headers?: Record<string, string> };

/** How a route is declared and documented, and, for a wire skin, how its wire enters the pipeline. */
interface InferenceRouteDoc {
  operationId: string;
  summary: string;
  body: z.ZodType;
  responses: Record<number, RouteResponseSpec>;
  /** A wire skin's entry (see {@link WireEntry}); without it the body is the operation's own. */
  enter?: WireEntry<InferenceBody>;
  /** Where a `system` prompt given apart (a preset's) goes in this wire's body (default: chat's). */
  placeSystem?: PlaceSystem;
  /** Where the caller's key is read (default: the bearer header); see `Route.readApiKey`. */
  readApiKey?: Route['readApiKey'];
  /** The wire's own error body (default: the gateway's envelope); see `Route.renderError`. */
  renderError?: Route['renderError'];
  /** The schema of that body, for the OpenAPI document. */
  errorBody?: Route['errorBody'];
  /** Hand `enter` the body as sent once validated (see `Route.bodyAsSent`). */
  bodyAsSent?: true;
}

/**
 * The one way to declare an inference route: `POST <op.path>`, inference keys only, the body
 * validated by `body` once the features' `resolveBody` hooks ran (a preset merged in), the handler the metered pipeline with
 * the operation — and every refusal before the pipeline (rpm, size, validation, a wire the skin
 * refuses) recorded, so no route can forget to. The rate-limit hit is counted with the hold
 * (`rateLimitWithHold`).
 */
export function defineInferenceRoute<Body extends InferenceBody, Answer>(
  op: InferenceOperation<Body, Answer>,
  doc: InferenceRouteDoc,
): Route {
  const refusalRecord = (requestId: string, auth: AuthContext, now: number, body: unknown) => {
    const { model, preset } = (body ?? {}) as { model?: unknown; preset?: unknown };
    return startRequestRecord({
      requestId,
      auth,
      endpoint: op.endpoint,
      requestedModel: typeof model === 'string' ? model : null,
      stream: false,
      startedAt: now,
      preset,
    });
  };
  return defineRoute({
    method: 'POST',
    path: op.path,
    operationId: doc.operationId,
    summary: doc.summary,
    tag: 'Inference',
    access: 'inference',
    body: doc.body,
    // Stage `resolve`: the features rewrite the raw body (a preset merged in) before validation.
    resolveBody: (raw, ctx) =>
      resolveBody(featuresOf(ctx.deps), raw, { ...ctx, placeSystem: doc.placeSystem ?? systemMessageFirst }),
    ...(doc.readApiKey && { readApiKey: doc.readApiKey }),
    ...(doc.renderError && { renderError: doc.renderError }),
    ...(doc.errorBody && { errorBody: doc.errorBody }),
    ...(doc.bodyAsSent && { bodyAsSent: doc.bodyAsSent }),
    responses: doc.responses,
    rateLimitWithHold: true,
    async handle({ request, requestId, body, auth, deps, rateLimit }) {
      let entered: ReturnType<WireEntry<InferenceBody>> = {
        op: op as InferenceOperation<InferenceBody, unknown>,
        body: body as Body,
      };
      if (doc.enter) {
        try {
          entered = doc.enter(body, request, deps);
        } catch (error) {
          return refuseBeforeHold(rateLimit, error, (refusal) =>
            recordRefusal(deps, refusalRecord(requestId, auth, deps.now(), body), refusal, op.spanOperation),
          );
        }
      }
      const response = await runMeteredCall(entered.op, {
        request,
        requestId,
        body: entered.body,
        auth,
        deps,
        ...(rateLimit ? { rateLimit } : {}),
      });
      for (const [name, value] of Object.entries(entered.headers ?? {})) response.headers.set(name, value);
      return response;
    },
    async onRefused({ requestId, auth, deps, body }, error) {
      await recordRefusal(deps, refusalRecord(requestId, auth, deps.now(), body), error, op.spanOperation);
    },
  });
}
