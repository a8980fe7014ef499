import type { Catalogue, CatalogueProvider } from '@tollgate/core';

/** How long the first-start banner waits for a local provider to answer. */
export const LOCAL_PROBE_TIMEOUT_MS = 1_000;

/** A provider on this machine (such as a local Ollama): usable by config, but maybe not running. */
export function isLoopback(baseUrl: string): boolean {
  try {
    const host = new URL(baseUrl).hostname;
    return host === 'localhost' || host === '[::1]' || host.startsWith('127.');
  } catch {
    return false;
  }
}

/**
 * The ids of the catalogue's loopback providers (those with a key, so their models are routed)
 * that answer `GET {base_url}/models` with a 2xx within `timeoutMs`, all probed at once. A local
 * server that is not running refuses the connection at once; one that hangs costs the timeout, once,
 * on first start. The key goes as a bearer token, as the OpenAI-compatible servers expect.
 */
export async function probeLocalProviders(
  catalogue: Catalogue,
  options: { timeoutMs?: number; fetch?: typeof fetch } = {},
): Promise<Set<string>> {
  const doFetch = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? LOCAL_PROBE_TIMEOUT_MS;
  const local = [...catalogue.providers.values()].filter(
    (provider) => provider.apiKey !== null && isLoopback(provider.baseUrl),
  );
  const answers = await Promise.all(
    local.map(async (provider) => ((await answers200(provider, doFetch, timeoutMs)) ? provider.id : null)),
  );
  return new Set(answers.filter((id): id is string => id !== null));
}

async function answers200(provider: CatalogueProvider, doFetch: typeof fetch, timeoutMs: number) {
  try {
    const response = await doFetch(`${provider.baseUrl}/models`, {
      headers: { authorization: `Bearer ${provider.apiKey}`, ...provider.headers },
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}
