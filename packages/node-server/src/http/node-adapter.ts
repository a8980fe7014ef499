import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorEnvelope, GatewayError, newId } from '@tollgate/core';
import { BodyAlreadyReadError, incomingMessageToRequest } from './incoming-message-to-request.js';
import { writeResponse } from './write-response.js';

/** A Web fetch handler, such as `gateway.fetch`. */
export type FetchHandler = (request: Request) => Response | Promise<Response>;

/** A node:http request listener. */
export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface NodeHandlerOptions {
  /** Called with an error the fetch handler threw (the client gets a generic 500). */
  onError?: (error: unknown) => void;
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
  const abort = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) abort.abort(new Error('client disconnected'));
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
    response = await handler(incomingMessageToRequest(req, abort.signal));
  } catch (error) {
    if (error instanceof BodyAlreadyReadError) {
      response = envelopeResponse(new GatewayError('invalid_request', error.message));
    } else {
      options.onError?.(error);
      response = internalErrorResponse();
    }
  }
  if (res.destroyed) {
    await response.body?.cancel().catch(() => {});
    return;
  }
  try {
    await writeResponse(response, res, req.method ?? 'GET');
  } catch (error) {
    options.onError?.(error);
    res.destroy();
  }
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
