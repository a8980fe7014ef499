import { ClientClosedError, GatewayError } from '../../errors/gateway-error.js';
import { readCappedBody, readJsonBody } from '../../http/read-json-body.js';
import { OAuthError } from './oauth-errors.js';

/** The OAuth requests are a few short parameters: anything larger is refused unread. */
const OAUTH_MAX_BODY_BYTES = 64 * 1024;

/**
 * A JSON object body, its problems as `invalid_request` in the RFC 6749 shape (a client that hangs
 * up mid-upload is still the gateway's `ClientClosedError`).
 */
async function readOAuthJson(request: Request): Promise<Record<string, unknown>> {
  let body: unknown;
  try {
    body = await readJsonBody(request, OAUTH_MAX_BODY_BYTES);
  } catch (error) {
    if (error instanceof GatewayError && !(error instanceof ClientClosedError)) {
      throw new OAuthError('invalid_request', error.message);
    }
    throw error;
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new OAuthError('invalid_request', 'The request body must be a JSON object.');
  }
  return body as Record<string, unknown>;
}

/**
 * The parameters of a token request: `application/x-www-form-urlencoded` (RFC 6749 §4.1.3, §4.4.2)
 * or a JSON object of strings. A parameter sent without a value counts as omitted (RFC 6749 §3.1);
 * one sent twice is `invalid_request` (§3.2). Any other content type is `invalid_request`.
 */
export async function readTokenParams(request: Request): Promise<Map<string, string>> {
  const mediaType = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (mediaType === 'application/json') return jsonParams(await readOAuthJson(request));
  if (mediaType !== 'application/x-www-form-urlencoded') {
    throw new OAuthError(
      'invalid_request',
      'Send the token request as application/x-www-form-urlencoded (or application/json).',
    );
  }
  const form = new URLSearchParams(await readCappedText(request));
  const params = new Map<string, string>();
  for (const [name, value] of form) {
    if (value === '') continue;
    if (params.has(name)) throw new OAuthError('invalid_request', `The parameter ${name} is repeated.`);
    params.set(name, value);
  }
  return params;
}

function jsonParams(body: Record<string, unknown>): Map<string, string> {
  const params = new Map<string, string>();
  for (const [name, value] of Object.entries(body)) {
    if (value === null || value === undefined || value === '') continue;
    if (typeof value !== 'string')
      throw new OAuthError('invalid_request', `The parameter ${name} must be a string.`);
    params.set(name, value);
  }
  return params;
}

/** The body as UTF-8 text, refused past {@link OAUTH_MAX_BODY_BYTES} (declared or streamed). */
async function readCappedText(request: Request): Promise<string> {
  const bytes = await readCappedBody(
    request,
    OAUTH_MAX_BODY_BYTES,
    () => new OAuthError('invalid_request', `The request body is larger than ${OAUTH_MAX_BODY_BYTES} bytes.`),
  );
  return bytes ? new TextDecoder().decode(bytes) : '';
}
