import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildCatalogue, parseGatewayConfig } from '@tollgate/core';
import { afterEach, describe, expect, it } from 'vitest';
import { isLoopback, probeLocalProviders } from './probe-local-providers.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((server) => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    }),
  );
});

/** A loopback server answering every request with `status`, or never when `status` is null. */
async function local(status: number | null, seen: string[] = []): Promise<string> {
  const server = createServer((request, response) => {
    seen.push(`${request.method} ${request.url} ${request.headers.authorization}`);
    if (status !== null)
      response.writeHead(status, { 'content-type': 'application/json' }).end('{"data":[]}');
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

/** A port nothing listens on: a server's, closed again. */
async function closedPort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}/v1`;
}

function catalogueOf(providers: Record<string, { base_url: string; api_key?: string }>) {
  return buildCatalogue(
    parseGatewayConfig({
      providers: Object.fromEntries(
        Object.entries(providers).map(([id, p]) => [id, { format: 'openai', ...p }]),
      ),
      models: Object.keys(providers).map((id) => ({
        id: `${id}/chat`,
        max_output_tokens: 100,
        endpoints: [{ provider: id, upstream_model: 'm', pricing: { prompt: '0', completion: '0' } }],
      })),
    }),
  );
}

describe('probeLocalProviders', () => {
  it('keeps the local providers that answer GET /models with a 2xx, sending their key', async () => {
    const seen: string[] = [];
    const catalogue = catalogueOf({
      ollama: { base_url: await local(200, seen), api_key: 'unused' },
      wrong: { base_url: await local(404), api_key: 'k' },
      down: { base_url: await closedPort(), api_key: 'k' },
    });
    expect(await probeLocalProviders(catalogue)).toEqual(new Set(['ollama']));
    expect(seen).toEqual(['GET /v1/models Bearer unused']);
  });

  it('gives up on a local server that never answers after the timeout', async () => {
    const catalogue = catalogueOf({ stuck: { base_url: await local(null), api_key: 'k' } });
    expect(await probeLocalProviders(catalogue, { timeoutMs: 50 })).toEqual(new Set());
  });

  it('probes neither remote providers nor providers without a key', async () => {
    const asked: string[] = [];
    const catalogue = catalogueOf({
      remote: { base_url: 'https://api.example.com/v1', api_key: 'k' },
      keyless: { base_url: 'http://127.0.0.1:9/v1' },
    });
    const answering = await probeLocalProviders(catalogue, {
      fetch: async (url) => {
        asked.push(String(url));
        return new Response('{}');
      },
    });
    expect(answering).toEqual(new Set());
    expect(asked).toEqual([]);
  });

  it.each([
    ['http://127.0.0.1:11434/v1', true],
    ['http://localhost:8000/v1', true],
    ['http://[::1]:8000/v1', true],
    ['https://api.openai.com/v1', false],
    ['not a url', false],
  ])('isLoopback(%s) is %s', (url, expected) => {
    expect(isLoopback(url)).toBe(expected);
  });
});
