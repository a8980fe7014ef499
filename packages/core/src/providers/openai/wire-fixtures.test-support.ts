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

/**
 * The HTTP bodies a Responses fixture stands for, one per stream it holds: an `.sse` file as is; a
 * `.chunks.txt` file as `event: <type>\ndata: <line>\n\n` per non-empty line, a new body after each
 * terminal event (`response.completed`, `response.incomplete`, `response.failed`).
 */
export function responsesWireBodies(name: string): Uint8Array[] {
  const bytes = fixtureBytes(name);
  if (name.endsWith('.sse')) return [bytes];
  const bodies: string[] = [];
  let body = '';
  for (const line of new TextDecoder().decode(bytes).split('\n')) {
    if (line.length === 0) continue;
    const { type } = JSON.parse(line) as { type: string };
    body += `event: ${type}\ndata: ${line}\n\n`;
    if (type === 'response.completed' || type === 'response.incomplete' || type === 'response.failed') {
      bodies.push(body);
      body = '';
    }
  }
  if (body !== '') bodies.push(body);
  return bodies.map((text) => new TextEncoder().encode(text));
}
