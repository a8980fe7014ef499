import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import {
  completionJson,
  embeddingInputCount,
  embeddingsJson,
  PACED,
  recordedChunkLines,
  sseEvents,
  syntheticChunkLines,
} from './wire.js';

/*
 * The mock upstream (its own process): `POST …/chat/completions` in OpenAI format with zero think
 * time, JSON or SSE (each event its own write), on keep-alive connections. A model named `*paced*`
 * is streamed with a gap between chunks, so a client can see whether a proxy forwards as it receives.
 * `POST …/embeddings` answers like OpenAI, one small fixed vector per input, also with zero think time.
 * Prints `{"url": …}` on stdout once listening.
 */

const { values } = parseArgs({
  options: { chunks: { type: 'string', default: '300' }, fixture: { type: 'string' } },
});
const n = Number(values.chunks);
const streamEvents = sseEvents(values.fixture ? recordedChunkLines(values.fixture) : syntheticChunkLines(n));
const pacedEvents = sseEvents(syntheticChunkLines(PACED.contentChunks));
const json = completionJson(n);
/** Embeddings answers by input count, built on first use (bounded: OpenAI takes up to 2048 inputs). */
const embeddingsAnswers = new Map<number, Buffer>();
const MAX_EMBEDDING_INPUTS = 2048;
const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };

const server = createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (part: Buffer) => parts.push(part));
  req.on('end', () => {
    let body: { model?: unknown; stream?: unknown; input?: unknown };
    try {
      body = JSON.parse(Buffer.concat(parts).toString('utf8'));
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"bad JSON","type":"invalid_request_error"}}');
      return;
    }
    if (req.method === 'POST' && req.url?.endsWith('/embeddings')) return answerEmbeddings(res, body.input);
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404).end();
      return;
    }
    if (body.stream !== true) {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': json.length });
      res.end(json);
      return;
    }
    res.writeHead(200, SSE_HEADERS);
    if (typeof body.model === 'string' && body.model.includes('paced')) return writePaced(res, 0);
    for (const event of streamEvents) res.write(event);
    res.end();
  });
});

function answerEmbeddings(res: import('node:http').ServerResponse, input: unknown): void {
  const inputs = embeddingInputCount(input);
  if (input === undefined || inputs < 1 || inputs > MAX_EMBEDDING_INPUTS) {
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end('{"error":{"message":"bad input","type":"invalid_request_error"}}');
    return;
  }
  let answer = embeddingsAnswers.get(inputs);
  if (!answer) {
    answer = embeddingsJson(inputs);
    embeddingsAnswers.set(inputs, answer);
  }
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': answer.length });
  res.end(answer);
}

function writePaced(res: import('node:http').ServerResponse, i: number): void {
  if (res.destroyed) return;
  if (i === pacedEvents.length) {
    res.end();
    return;
  }
  res.write(pacedEvents[i]);
  setTimeout(() => writePaced(res, i + 1), PACED.gapMs);
}

server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address && typeof address === 'object') {
    process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${address.port}` })}\n`);
  }
});
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
});
