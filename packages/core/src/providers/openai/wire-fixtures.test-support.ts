import { fixtureBytes } from '../wire-fixtures.test-support.js';

export {
  byteStream,
  collect,
  fixtureBytes,
  fixtureJson,
  randomSplit,
  seededRandom,
  splitAt,
} from '../wire-fixtures.test-support.js';

/**
 * The HTTP body an OpenAI-format fixture stands for: an `.sse` file as is; a `.chunks.txt` file as
 * `data: <line>\n\n` per non-empty line, each line byte-exact, then `data: [DONE]\n\n`.
 */
export function openAIWireBody(name: string): Uint8Array {
  const bytes = fixtureBytes(name);
  if (name.endsWith('.sse')) return bytes;
  const lines = new TextDecoder().decode(bytes).split('\n');
  const body = lines
    .filter((line) => line.length > 0)
    .map((line) => `data: ${line}\n\n`)
    .join('');
  return new TextEncoder().encode(`${body}data: [DONE]\n\n`);
}
