/** A `fetch` with the global's signature. */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/*
 * Each in-process gateway gets an origin of its own (`http://gateway-<n>.test`), so the helpers that
 * take a gateway's URL (`call`, `getGeneration`, the SDK clients) reach it whether it is served or
 * not: a URL on a registered origin goes straight to that gateway's `fetch`, any other over the
 * network. A suite then moves between the real server and in-process with one option.
 */
const inProcessGateways = new Map<string, FetchLike>();
let lastOrigin = 0;

/** Registers `fetch` under a new origin; returns it and the function that removes it. */
export function registerInProcessOrigin(fetch: FetchLike): { origin: string; unregister(): void } {
  const origin = `http://gateway-${++lastOrigin}.test`;
  inProcessGateways.set(origin, fetch);
  return { origin, unregister: () => inProcessGateways.delete(origin) };
}

/** `fetch` that sends a request for a registered origin to its gateway in-process, else over the network. */
export const fetchGatewayAt: FetchLike = (input, init) => {
  const url = input instanceof Request ? input.url : String(input);
  const inProcess = inProcessGateways.get(new URL(url).origin);
  return inProcess ? inProcess(input, init) : globalThis.fetch(input, init);
};
