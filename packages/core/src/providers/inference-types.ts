/**
 * The wire shapes of the non-chat inference endpoints as the gateway speaks them to its callers
 * (OpenAI's embeddings and images; Cohere/Jina's rerank), and what a provider capability returns
 * for each. Only the fields the gateway reads are typed; the rest passes through untouched.
 */

/** `POST /v1/embeddings` (OpenAI's request). */
export interface EmbeddingsRequest {
  model: string;
  input: string | string[] | number[] | number[][];
  encoding_format?: 'float' | 'base64';
  dimensions?: number;
  user?: string;
  [field: string]: unknown;
}

/** What an embeddings call returns: the OpenAI-shaped list body and the tokens to charge. */
export interface EmbeddingsResult {
  /** `{object: "list", data: [{object: "embedding", index, embedding}], model, usage}`; `model` is the upstream's name. */
  response: { object: 'list'; data: unknown[]; model?: string; usage?: unknown; [field: string]: unknown };
  /** The provider's `usage.prompt_tokens`; `null` when it reported none. */
  promptTokens: number | null;
}

/** `POST /v1/images/generations` (OpenAI's request). */
export interface ImagesRequest {
  model: string;
  prompt: string;
  n?: number;
  size?: string;
  quality?: string;
  response_format?: 'url' | 'b64_json';
  [field: string]: unknown;
}

/** What an image generation returns: the OpenAI-shaped body; the images charged are `response.data.length`. */
export interface ImagesResult {
  response: { created: number; data: unknown[]; usage?: unknown; [field: string]: unknown };
}

/** `POST /v1/rerank` (Cohere/Jina's request). */
export interface RerankRequest {
  model: string;
  query: string;
  documents: (string | { text: string })[];
  top_n?: number;
  return_documents?: boolean;
  [field: string]: unknown;
}

/** What a rerank call returns, whatever the upstream's shape. */
export interface RerankResult {
  /** The upstream's id, when it gave one. */
  id: string | null;
  /** Indexes into the request's documents (every one within them) with their scores, best first. */
  results: { index: number; relevance_score: number }[];
  /** Billed search units as reported (Cohere's `meta.billed_units.search_units`); `null` when not reported. */
  searchUnits: number | null;
}
