import type { SearchResult } from './search-types.js';

/** The bounds of what one search adds to the prompt: per result's title, url and text. */
const MAX_TITLE_CHARS = 300;
const MAX_URL_CHARS = 2_048;
const MAX_TEXT_CHARS = 2_000;

/** The text that introduces the results when the plugin gives no `search_prompt`. */
const DEFAULT_SEARCH_PROMPT =
  'A web search was run for the latest user message. Use the results below where they help, and cite ' +
  'the sources you use with markdown links to their URLs.';

/**
 * The most prompt tokens the results message of one search can add, for the pre-flight: the intro
 * and `maxResults` results at their bounds, every character counted as a token (a title or text may
 * be CJK, which runs about a token a character), so the hold covers what the search can bring.
 */
export function searchResultsTokenBound(maxResults: number, searchPrompt: string | null): number {
  const intro = searchPrompt ?? DEFAULT_SEARCH_PROMPT;
  // One result's lines as `searchResultsMessage` writes them: '', `[n] title`, `URL: url`, text.
  const perResult =
    4 + `[${maxResults}] `.length + MAX_TITLE_CHARS + 'URL: '.length + MAX_URL_CHARS + MAX_TEXT_CHARS;
  return intro.length + Math.max(maxResults * perResult, '\n\nThe search found no results.'.length);
}

/**
 * The system message the results go in: the intro (`search_prompt` when given), then each result's
 * title, URL and text, each cut to a bound so one search adds at most about 24,000 characters.
 */
export function searchResultsMessage(
  results: readonly SearchResult[],
  searchPrompt: string | null,
): { role: 'system'; content: string } {
  const lines = [searchPrompt ?? DEFAULT_SEARCH_PROMPT];
  if (results.length === 0) lines.push('', 'The search found no results.');
  results.forEach((result, i) => {
    lines.push(
      '',
      `[${i + 1}] ${cut(result.title, MAX_TITLE_CHARS)}`,
      `URL: ${cut(result.url, MAX_URL_CHARS)}`,
      cut(result.text, MAX_TEXT_CHARS),
    );
  });
  return { role: 'system', content: lines.join('\n') };
}

/** `messages` with `message` inserted just above the last `user` message (at the end if none). */
export function insertAboveLastUser<M extends { role?: unknown }>(messages: readonly M[], message: M): M[] {
  let at = messages.length;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]?.role === 'user') {
      at = i;
      break;
    }
  }
  return [...messages.slice(0, at), message, ...messages.slice(at)];
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
