import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorEnvelope, GatewayError, newId } from '@tollgate/core';
import { unreadJsonBody } from './buffered-json-response.js';
import { BodyAlreadyReadError, incomingMessageToRequest } from './incoming-message-to-request.js';
import { lazyRequest } from './lazy-request.js';
import { writeResponse } from './write-response.js';

/** A Web fetch handler, such as `gateway.fetch`. */
export type FetchHandler = (request: Request) => Response | Promise<Response>;

/** A node:http request listener. */
export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface NodeHandlerOptions {
  /** Called with an error the fetch handler threw (the client gets a generic 500). */
  onError?: (error: unknown) => void;
  /**
   * Hand the handler a `Request` that builds undici's own only when needed (`lazyRequest`): cheaper
   * per request, but not an argument to `fetch()` or `new Request()`. For a handler that passes the
   * request on to either, leave this off (the default).
   */
  lazyRequests?: boolean;
}

/**
 * Turns a Web fetch handler into a node:http request listener. The request body is streamed to the
 * handler, `request.signal` aborts when the client disconnects before the response is finished, and
 * the response body is streamed back with backpressure.
 */
export function toNodeHandler(handler: FetchHandler, options: NodeHandlerOptions = {}): NodeHandler {
  return (req, res) => {
    void handle(handler, req, res, options);
  };
}

async function handle(
  handler: FetchHandler,
  req: IncomingMessage,
  res: ServerResponse,
  options: NodeHandlerOptions,
): Promise<void> {
  const incoming = incomingRequest(req, options.lazyRequests === true);
  res.once('close', () => {
    if (!res.writableFinished) incoming.abort(new Error('client disconnected'));
  });
  res.once('finish', () => {
    // A body the handler started but did not finish reading would stall a keep-alive socket.
    if (!req.complete) {
      req.removeAllListeners('data');
      req.resume();
    }
  });
  let response: Response;
  try {
    response = await handler(incoming.toRequest());
  } catch (error) {
    if (error instanceof BodyAlreadyReadError) {
      response = envelopeResponse(new GatewayError('invalid_request', error.message));
    } else {
      options.onError?.(error);
      response = internalErrorResponse();
    }
  }
  if (res.destroyed) {
    if (!unreadJsonBody(response)) await response.body?.cancel().catch(() => {});
    return;
  }
  try {
    await writeResponse(response, res, req.method ?? 'GET');
  } catch (error) {
    options.onError?.(error);
    res.destroy();
  }
}

/** The handler's request, made by `toRequest` (which may throw `BodyAlreadyReadError`), and how its signal aborts. */
function incomingRequest(
  req: IncomingMessage,
  lazy: boolean,
): { toRequest(): Request; abort(reason: unknown): void } {
  // Lazy only while nothing has read the body; a body parser's leftovers need the full conversion.
  if (lazy && !(req.readableEnded || req.readableDidRead)) {
    const { request, abort } = lazyRequest(req);
    return { toRequest: () => request, abort };
  }
  const controller = new AbortController();
  return {
    toRequest: () => incomingMessageToRequest(req, controller.signal),
    abort: (reason) => controller.abort(reason),
  };
}

/** The spec's error envelope for a failure the handler did not turn into a response itself. */
function internalErrorResponse(): Response {
  return envelopeResponse(
    new GatewayError('internal_error', 'The gateway failed unexpectedly. The request was not billed.'),
  );
}

/** A gateway error as the envelope, with a request id like every other answer. */
function envelopeResponse(error: GatewayError): Response {
  const requestId = newId('req');
  return new Response(JSON.stringify(errorEnvelope(error, requestId)), {
    status: error.status,
    headers: { 'content-type': 'application/json', 'x-gateway-request-id': requestId },
  });
}
