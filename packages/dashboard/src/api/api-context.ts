import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { ApiClient } from './api-client.js';

/** The signed-in session's API client, provided by the app shell. */
export const ApiContext = createContext<ApiClient | null>(null);

/** The API client of the signed-in session; only used below the shell that provides it. */
export function useApi(): ApiClient {
  const api = useContext(ApiContext);
  if (!api) throw new Error('useApi outside a signed-in session');
  return api;
}
