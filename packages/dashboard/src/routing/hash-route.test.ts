import { describe, expect, it } from 'vitest';
import { parseHashRoute, requestHref } from './hash-route.js';

describe('parseHashRoute', () => {
  it.each(['', '#', '#/'])('parseHashRoute - "%s" is the overview', (hash) => {
    expect(parseHashRoute(hash)).toEqual({ page: 'overview' });
  });

  it('parseHashRoute - names each page, with or without a trailing slash', () => {
    expect(parseHashRoute('#/keys')).toEqual({ page: 'keys' });
    expect(parseHashRoute('#/requests/')).toEqual({ page: 'requests' });
    expect(parseHashRoute('#/ledger')).toEqual({ page: 'ledger' });
  });

  it('parseHashRoute - reads the request id of a detail page', () => {
    expect(parseHashRoute('#/requests/req_abc')).toEqual({ page: 'request', id: 'req_abc' });
    expect(parseHashRoute(requestHref('req a/b'))).toEqual({ page: 'request', id: 'req a/b' });
  });

  it('parseHashRoute - anything else is not found', () => {
    expect(parseHashRoute('#/nope')).toEqual({ page: 'not-found', path: '/nope' });
  });
});
