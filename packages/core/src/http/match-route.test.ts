import { describe, expect, it } from 'vitest';
import { createRouteMatcher } from './match-route.js';
import type { Route } from './route.js';

const route = (method: Route['method'], path: string) => ({ method, path }) as Route;

describe('createRouteMatcher', () => {
  const routes = [
    route('GET', '/v1/keys'),
    route('POST', '/v1/keys'),
    route('PATCH', '/v1/keys/{id}'),
    route('GET', '/v1/models/{vendor}/{model}/endpoints'),
  ];
  const match = createRouteMatcher(routes);

  it('matches method and path and extracts decoded params', () => {
    expect(match('PATCH', '/v1/keys/key_1')).toEqual({ route: routes[2], params: { id: 'key_1' } });
    expect(match('GET', '/v1/models/meta-llama/llama-3.3%3Afree/endpoints')).toEqual({
      route: routes[3],
      params: { vendor: 'meta-llama', model: 'llama-3.3:free' },
    });
  });

  it('answers HEAD with the GET route', () => {
    expect(match('HEAD', '/v1/keys')).toMatchObject({ route: routes[0] });
  });

  it('reports the allowed methods of a known path', () => {
    expect(match('DELETE', '/v1/keys')).toEqual({ allowed: ['GET', 'POST'] });
  });

  it('returns null for unknown paths, empty params and extra segments', () => {
    expect(match('GET', '/v1/nope')).toBeNull();
    expect(match('PATCH', '/v1/keys/')).toBeNull();
    expect(match('GET', '/v1/keys/a/b')).toBeNull();
    expect(match('PATCH', '/v1/keys/%E0%A4%A')).toBeNull();
  });
});
