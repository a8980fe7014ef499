import { ClientClosedError, GatewayError } from '../errors/gateway-error.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from './json-depth.js';
import { tooLarge } from './size-caps.js';

/**
 * Reads a JSON request body, refusing it with `413 payload_too_large` as soon as it passes
 * `maxBytes` (by `Content-Length` up front, or while streaming when the length is not declared).
 * Malformed JSON is `400 invalid_request`; the parser's message is not echoed, since it can quote
 * the body. So is a body nested deeper than {@link MAX_JSON_DEPTH}, checked before it is parsed.
 */
export async function readJsonBody(request: Request, maxBytes: number): Promise<unknown> {
  const bytes = await readCappedBody(request, maxBytes, (size, atLeast) =>
    tooLarge('Request body', size, maxBytes, atLeast ? { atLeast: true } : undefined),
  );
  if (!bytes)
    throw new GatewayError('invalid_request', 'The request body is empty; a JSON object is required.');
  const text = new TextDecoder().decode(bytes);
  if (text.trim() === '')
    throw new GatewayError('invalid_request', 'The request body is empty; a JSON object is required.');
  if (nestsDeeperThan(text, MAX_JSON_DEPTH))
    throw new GatewayError(
      'invalid_request',
      `The request body nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep.`,
    );
  try {
    return JSON.parse(text);
  } catch {
    throw new GatewayError('invalid_request', 'The request body is not valid JSON.');
  }
}

/**
 * The request body's bytes, or `null` when there is none. Refused with `tooLarge(size, atLeast)` as
 * soon as it passes `maxBytes`: by `Content-Length` up front, or while streaming when the length
 * is not declared (`atLeast`: the body is at least `size` bytes). A hang-up during the upload is a
 * `ClientClosedError`.
 */
export async function readCappedBody(
  request: Request,
  maxBytes: number,
  tooLarge: (size: number, atLeast: boolean) => Error,
): Promise<Uint8Array | null> {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(declared, false);
  // A declared length within the cap bounds what HTTP delivers: read it whole, which a host's
  // request may do without a stream (the Node adapter's lazy request does).
  if (Number.isFinite(declared) && declared > 0) return readWhole(request, maxBytes, tooLarge);
  if (!request.body) return null;
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    let read: ReadableStreamReadResult<Uint8Array>;
    try {
      read = await reader.read();
    } catch {
      // The body stream fails only when the connection does: the caller hung up mid-upload.
      throw bodyNeverArrived();
    }
    const { done, value } = read;
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge(size, true);
    }
    chunks.push(value);
  }
  return concat(chunks, size);
}

async function readWhole(
  request: Request,
  maxBytes: number,
  tooLarge: (size: number, atLeast: boolean) => Error,
): Promise<Uint8Array> {
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await request.arrayBuffer());
  } catch {
    throw bodyNeverArrived();
  }
  // Only a request made in-process can carry more than it declares.
  if (bytes.byteLength > maxBytes) throw tooLarge(bytes.byteLength, false);
  return bytes;
}

function bodyNeverArrived(): ClientClosedError {
  return new ClientClosedError('The client closed the connection before the request body arrived.');
}

function concat(chunks: Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}
