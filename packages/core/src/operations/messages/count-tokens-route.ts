import { ClientClosedError, GatewayError } from '../../errors/gateway-error.js';
import type { GatewayDeps } from '../../gateway-deps.js';
import { defineRoute } from '../../http/route.js';
import { estimateTokens } from '../../metering/estimate-worst-case.js';
import { UpstreamError } from '../../providers/upstream-error.js';
import { planRoutes, readRoutingPreferences } from '../../routing/plan-routes.js';
import type { PlannedRoute } from '../../routing/walk-routes.js';
import { droppedTokens, withoutGatewayFields } from './messages-operation.js';
import {
  type CountTokensRequest,
  countTokensRequestSchema,
  countTokensResponseSchema,
  type MessagesRequest,
} from './messages-request-schema.js';
import { ANTHROPIC_WIRE } from './messages-route.js';
import { messagesToChat, type TranslatedRequest } from './messages-to-chat.js';

/** How long the forwarded count may take when the provider sets no `timeout_ms`. */
const COUNT_TOKENS_TIMEOUT_MS = 10_000;

/**
 * `POST /v1/messages/count_tokens` (product.md): `{input_tokens}` for a Messages body, counted by the
 * first Anthropic route of the model (`/messages/count_tokens`, the caller's body and Anthropic
 * headers passed through), else the gateway's pre-flight estimate — also when that route cannot be
 * reached or fails on its side. A provider's 4xx is the caller's `400`. Not a model call: nothing is
 * charged, recorded or counted against the rate limit.
 */
export const countTokensRoute = defineRoute({
  method: 'POST',
  path: '/v1/messages/count_tokens',
  operationId: 'countMessageTokens',
  summary: "The prompt's input tokens: Anthropic's count on an Anthropic route, else the gateway's estimate",
  tag: 'Inference',
  access: 'inference',
  countsRateLimit: false,
  body: countTokensRequestSchema,
  ...ANTHROPIC_WIRE,
  responses: { 200: { description: 'The input tokens', schema: countTokensResponseSchema } },
  async handle({ request, body, deps }) {
    const wire = body as CountTokensRequest;
    const translated = messagesToChat(wire as MessagesRequest);
    const plan = planRoutes(
      deps.catalogue,
      readRoutingPreferences(translated.chat, deps.catalogue.providers.keys()),
      {
        usesTools: false,
        modelType: 'chat',
        path: '/v1/messages/count_tokens',
        serves: (provider) => deps.providers(provider).chat !== undefined,
        observe: (key) => deps.endpointStats.get(key),
      },
    );
    const anthropic = plan.routes.find((route) => deps.providers(route.endpoint.provider).messages);
    const counted = anthropic ? await countUpstream(deps, anthropic, wire, request) : null;
    return deps.jsonResponse({ input_tokens: counted ?? estimatedInputTokens(translated) });
  },
  // Not a model call: a refusal is answered, not recorded.
  async onRefused() {},
});

/** The pre-flight's prompt estimate of a Messages body (as `messagesOperation` holds it). */
function estimatedInputTokens(translated: TranslatedRequest): number {
  const { messages, tools } = translated.chat;
  return (
    estimateTokens(JSON.stringify(messages), tools ? JSON.stringify(tools) : '') + droppedTokens(translated)
  );
}

/**
 * Anthropic's count on `route`, or `null` when it could not be had (no answer in time, a network
 * failure, a 5xx or 429): the estimate then stands in. A 4xx other than 408/429 is the caller's
 * request refused: `400 invalid_request` with the provider's message.
 */
async function countUpstream(
  deps: GatewayDeps,
  route: PlannedRoute,
  wire: CountTokensRequest,
  request: Request,
): Promise<number | null> {
  const { provider } = route.endpoint;
  const controller = new AbortController();
  const abort = () => controller.abort(request.signal.reason);
  request.signal.addEventListener('abort', abort, { once: true });
  const cancel = deps.clock.schedule(() => controller.abort(), provider.timeoutMs ?? COUNT_TOKENS_TIMEOUT_MS);
  try {
    return await deps.providers(provider).messages!.countTokens(
      {
        body: withoutGatewayFields(wire),
        version: request.headers.get('anthropic-version'),
        beta: request.headers.get('anthropic-beta'),
      },
      { provider, upstreamModel: route.endpoint.upstreamModel, maxOutputTokens: 0 },
      { signal: controller.signal },
    );
  } catch (error) {
    if (request.signal.aborted) throw new ClientClosedError();
    const status = error instanceof UpstreamError && error.kind === 'http' ? (error.status ?? 0) : 0;
    if (status >= 400 && status < 500 && status !== 408 && status !== 429) {
      throw new GatewayError(
        'invalid_request',
        `Provider ${provider.id} refused the request (HTTP ${status}): ${(error as Error).message}`,
        {},
        `Provider ${provider.id} refused the request (HTTP ${status}).`,
      );
    }
    return null;
  } finally {
    cancel();
    request.signal.removeEventListener('abort', abort);
  }
}
