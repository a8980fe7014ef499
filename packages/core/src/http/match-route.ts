import type { Route } from './route.js';
import { hasNul } from './stored-text.js';

type RouteMatch = { route: Route; params: Record<string, string> } | { allowed: string[] } | null;

interface CompiledRoute {
  route: Route;
  segments: string[];
}

/**
 * Compiles the route table into a matcher. A path that exists under another method answers with
 * the methods it does allow; a path that does not exist answers `null`.
 */
export function createRouteMatcher(
  routes: readonly Route[],
): (method: string, pathname: string) => RouteMatch {
  const compiled: CompiledRoute[] = routes.map((route) => ({ route, segments: route.path.split('/') }));
  return (method, pathname) => {
    const parts = pathname.split('/');
    const allowed: string[] = [];
    for (const { route, segments } of compiled) {
      const params = matchSegments(segments, parts);
      if (!params) continue;
      if (route.method === method || (method === 'HEAD' && route.method === 'GET')) return { route, params };
      allowed.push(route.method);
    }
    return allowed.length > 0 ? { allowed } : null;
  };
}

function matchSegments(template: string[], parts: string[]): Record<string, string> | null {
  if (template.length !== parts.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < template.length; i++) {
    const t = template[i]!;
    const p = parts[i]!;
    if (t.startsWith('{') && t.endsWith('}')) {
      if (p === '') return null;
      let value: string;
      try {
        value = decodeURIComponent(p);
      } catch {
        return null;
      }
      // No stored id holds a NUL, and some databases cannot even compare one.
      if (hasNul(value)) return null;
      params[t.slice(1, -1)] = value;
    } else if (t !== p) {
      return null;
    }
  }
  return params;
}
