import type { HttpResponse } from './http-client.js';

/** One scripted answer of a fake {@link HttpClient}: what a provider would have sent. */
export interface ScriptedHttpReply {
  status: number;
  /** Response headers; looked up case-insensitively. */
  headers?: Record<string, string>;
  /** The body as separate reads; an Error among them is thrown at that point (a broken stream). */
  pieces?: (Uint8Array | Error)[];
  /** Awaited before each read after the first: the pace of a stream. */
  between?: () => Promise<void>;
}

/**
 * A scripted reply as the `HttpResponse` the providers read, so a fake `HttpClient` (the core's
 * own tests, `@tollgate/testing`) answers through the same seam as the network; `onDiscard` runs
 * when the caller releases the body unread.
 */
export function scriptedHttpResponse(
  reply: ScriptedHttpReply,
  onDiscard: () => void = () => {},
): HttpResponse {
  const pieces = reply.pieces ?? [];
  const headers = new Map(Object.entries(reply.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  async function* body() {
    for (const [index, piece] of pieces.entries()) {
      if (index > 0 && reply.between) await reply.between();
      if (piece instanceof Error) throw piece;
      yield piece;
    }
  }
  return {
    status: reply.status,
    header: (name) => headers.get(name.toLowerCase()) ?? null,
    text: async () => {
      let text = '';
      const decoder = new TextDecoder();
      for await (const piece of body()) text += decoder.decode(piece, { stream: true });
      return text + decoder.decode();
    },
    body,
    discard: async () => {
      onDiscard();
    },
  };
}
