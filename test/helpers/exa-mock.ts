import { LoopbackServer } from './loopback-server.js';

/** One request the mock search backend received. */
export interface SearchCall {
  path: string;
  apiKey: string | null;
  body: { query?: unknown; numResults?: unknown };
}

/**
 * A loopback web-search backend in Exa's shape: `POST /search` with `x-api-key` and
 * `{query, numResults}` → `{requestId, results: [{id, title, url, text}], costDollars: {total}}`,
 * the results cut to `numResults`. Any other path → 404.
 */
export class ExaMock {
  readonly calls: SearchCall[] = [];
  private readonly server = new LoopbackServer();
  url = '';

  constructor(
    private readonly results: { title: string; url: string; text: string }[],
    private readonly costUsd = 0.005,
  ) {}

  async start(): Promise<this> {
    this.url = await this.server.listen((req, res) => {
      let raw = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => {
        raw += chunk;
      });
      req.on('end', () => {
        const body = raw ? JSON.parse(raw) : {};
        this.calls.push({ path: req.url ?? '', apiKey: (req.headers['x-api-key'] as string) ?? null, body });
        if (req.method !== 'POST' || req.url !== '/search') {
          res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
          return;
        }
        const n = typeof body.numResults === 'number' ? body.numResults : 10;
        const answer = {
          requestId: 'exa-mock',
          results: this.results.slice(0, n).map((r) => ({ id: r.url, ...r })),
          costDollars: { total: this.costUsd },
        };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
      });
    });
    return this;
  }

  stop(): Promise<void> {
    return this.server.close();
  }
}
