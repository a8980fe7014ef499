import { GatewayError } from '../../errors/gateway-error.js';

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/**
 * The caller's key on the Anthropic wire (product.md): `x-api-key` or `Authorization: Bearer`, since
 * Claude Code and the Anthropic SDK send either (`apiKey` / `authToken`). An empty header counts as
 * absent; two different keys are `401 invalid_api_key` (which one was meant cannot be told); none
 * is `401 unauthenticated`, as is an `Authorization` header that is not a bearer token and no
 * `x-api-key` beside it.
 */
export function readAnthropicKey(request: Request): string {
  const apiKey = request.headers.get('x-api-key')?.trim() || null;
  const authorization = request.headers.get('authorization')?.trim() || null;
  const bearer = authorization ? (BEARER.exec(authorization)?.[1] ?? null) : null;
  if (apiKey !== null && bearer !== null && apiKey !== bearer) {
    throw new GatewayError(
      'invalid_api_key',
      'The x-api-key and Authorization headers carry two different keys; send one key.',
    );
  }
  const key = apiKey ?? bearer;
  if (key !== null) return key;
  throw new GatewayError(
    'unauthenticated',
    authorization === null
      ? 'Missing API key; send "x-api-key: <API_KEY>" or "Authorization: Bearer <API_KEY>".'
      : 'The Authorization header is not a bearer token; send "x-api-key: <API_KEY>" or "Authorization: Bearer <API_KEY>".',
  );
}
