// biome-ignore lint/suspicious/noExplicitAny: upstream bodies are read as plain JSON.
type Json = any;

/**
 * An honest upstream of every format the money tests use: it generates all it is allowed and bills
 * what it received, as a real provider does. Its tokenizer: a quarter token per ASCII character and
 * a token per other character (a CJK-heavy text runs about a token a character). An image part is
 * billed at {@link IMAGE_TOKENS}, whatever its URL. A chat call that names no output ceiling
 * generates {@link UNBOUNDED_OUTPUT} tokens per choice. `usage` overrides what it reports (an absurd
 * count, or none at all).
 */
export const IMAGE_TOKENS = 765;
export const UNBOUNDED_OUTPUT = 40_000;

/** What the upstream billed for one call (for the checks) and how it reports it. */
export interface Billing {
  promptTokens: number;
  completionTokens: number;
  searchUnits: number;
}

/** How the upstream reports usage: as billed, an absurd count, or not at all. */
export type Reporting = 'honest' | 'absurd' | 'missing';

export function tokensOf(text: string): number {
  let ascii = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) < 0x80) ascii++;
  return Math.ceil(ascii / 4) + (text.length - ascii);
}

/** Prompt tokens of chat messages as received: text by the tokenizer, each image at its flat price. */
export function chatPromptTokens(messages: unknown): number {
  let images = 0;
  const text = JSON.stringify(messages, (_key, value: Json) => {
    if (value && typeof value === 'object' && value.type === 'image_url') {
      images++;
      return undefined;
    }
    return value;
  });
  return tokensOf(text) + images * IMAGE_TOKENS;
}

/** Cohere's billing: each document with the query in chunks of 500 tokens, 100 chunks a unit. */
export function rerankUnits(query: string, documents: (string | { text: string })[]): number {
  let chunks = 0;
  for (const document of documents) {
    const text = typeof document === 'string' ? document : document.text;
    chunks += Math.max(1, Math.ceil(tokensOf(query + text) / 500));
  }
  return Math.ceil(chunks / 100);
}

const ABSURD = 1e15;

/** The chat answer, billed for what was received and generated. */
export function chatAnswer(body: Json, reporting: Reporting): { answer: Json; billing: Billing } {
  const asked = [body.max_tokens, body.max_completion_tokens].filter((v) => typeof v === 'number');
  const perChoice = asked.length > 0 ? Math.max(...asked) : UNBOUNDED_OUTPUT;
  const choices = Math.max(1, body.n ?? 1, body.best_of ?? 1);
  const billing = {
    promptTokens: chatPromptTokens(body.messages),
    completionTokens: perChoice * choices,
    searchUnits: 0,
  };
  const text = 'x'.repeat(Math.min(perChoice, 200));
  const answer: Json = {
    id: 'chatcmpl-honest',
    object: 'chat.completion',
    created: 1,
    model: body.model,
    choices: Array.from({ length: body.n ?? 1 }, (_, index) => ({
      index,
      message: { role: 'assistant', content: text },
      finish_reason: 'length',
    })),
  };
  if (reporting !== 'missing') {
    const prompt = reporting === 'absurd' ? ABSURD : billing.promptTokens;
    const completion = reporting === 'absurd' ? ABSURD : billing.completionTokens;
    answer.usage = {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
    };
  }
  return { answer, billing };
}

/** The embeddings answer, billed by the tokenizer over every input. */
export function embeddingsAnswer(body: Json, reporting: Reporting): { answer: Json; billing: Billing } {
  const inputs: string[] = Array.isArray(body.input) ? body.input : [body.input];
  const promptTokens = inputs.reduce((n, input) => n + tokensOf(String(input)), 0);
  const answer: Json = {
    object: 'list',
    data: inputs.map((_, index) => ({ object: 'embedding', index, embedding: [0.1, 0.2] })),
    model: body.model,
  };
  if (reporting !== 'missing') {
    const reported = reporting === 'absurd' ? ABSURD : promptTokens;
    answer.usage = { prompt_tokens: reported, total_tokens: reported };
  }
  return { answer, billing: { promptTokens, completionTokens: 0, searchUnits: 0 } };
}

/** Cohere v2's rerank answer, billed as Cohere bills. */
export function rerankAnswer(body: Json, reporting: Reporting): { answer: Json; billing: Billing } {
  const searchUnits = rerankUnits(body.query, body.documents);
  const answer: Json = {
    id: 'rerank-honest',
    results: body.documents.map((_: unknown, index: number) => ({ index, relevance_score: 1 / (index + 1) })),
    meta: {},
  };
  if (reporting !== 'missing') {
    answer.meta.billed_units = { search_units: reporting === 'absurd' ? ABSURD : searchUnits };
  }
  return { answer, billing: { promptTokens: 0, completionTokens: 0, searchUnits } };
}

/** Exa's search answer at its most: every result longer than the gateway keeps, CJK text, a $3 cost. */
export function searchAnswer(body: Json): Json {
  return {
    results: Array.from({ length: body.numResults }, (_, i) => ({
      id: `r${i}`,
      title: '題'.repeat(1_000),
      url: `https://example.com/${'p'.repeat(5_000)}`,
      text: '漢'.repeat(30_000),
    })),
    costDollars: { total: 3 },
  };
}
