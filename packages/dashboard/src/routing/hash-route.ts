/** The dashboard's pages, as the URL's hash names them. */
export type Route =
  | { page: 'overview' }
  | { page: 'keys' }
  | { page: 'requests' }
  | { page: 'request'; id: string }
  | { page: 'ledger' }
  | { page: 'not-found'; path: string };

/** The route of a location hash: `#/keys`, `#/requests/req_1`; `` and `#` and `#/` are the overview. */
export function parseHashRoute(hash: string): Route {
  const path = hash.replace(/^#/, '').replace(/\/+$/, '') || '/';
  if (path === '/') return { page: 'overview' };
  if (path === '/keys') return { page: 'keys' };
  if (path === '/requests') return { page: 'requests' };
  if (path === '/ledger') return { page: 'ledger' };
  const request = /^\/requests\/([^/]+)$/.exec(path);
  if (request?.[1]) return { page: 'request', id: safeDecode(request[1]) };
  return { page: 'not-found', path };
}

/** The hash of a request's detail page. */
export function requestHref(id: string): string {
  return `#/requests/${encodeURIComponent(id)}`;
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
