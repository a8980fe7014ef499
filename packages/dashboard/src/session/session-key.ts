const STORAGE_KEY = 'tollgate.dashboard.key';

// The key lives only in this tab's sessionStorage: never localStorage, cookies or IndexedDB, so
// it is gone when the tab closes and no other tab or request carries it.

/** The signed-in provisioning key of this tab, if any. */
export function readSessionKey(): string | null {
  try {
    return sessionStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
}

/** Keeps the key for this tab's session. */
export function saveSessionKey(key: string): void {
  try {
    sessionStorage.setItem(STORAGE_KEY, key);
  } catch {
    // Storage refused (private mode quota): the key still works until the page reloads.
  }
}

/** Forgets the key. */
export function clearSessionKey(): void {
  try {
    sessionStorage.removeItem(STORAGE_KEY);
  } catch {
    // Nothing stored.
  }
}
