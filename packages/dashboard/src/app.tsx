import { useCallback, useMemo, useState } from 'preact/hooks';
import { createApiClient } from './api/api-client.js';
import { ApiContext } from './api/api-context.js';
import { AppShell } from './app-shell.js';
import { AuthorizePage } from './authorize/authorize-page.js';
import { isAuthorizeRequest } from './authorize/authorize-params.js';
import { clearSessionKey, readSessionKey, saveSessionKey } from './session/session-key.js';
import { SignInPage } from './session/sign-in-page.js';

/**
 * The session: sign in, then either the OAuth approve page (when the URL's query has `client_id`;
 * the query stays through sign-in) or the hash-routed dashboard. A 401 anywhere signs out.
 */
export function App() {
  const [key, setKey] = useState(readSessionKey);
  const [notice, setNotice] = useState<string | null>(null);

  const signOut = useCallback((message: string | null) => {
    clearSessionKey();
    setKey(null);
    setNotice(message);
  }, []);

  const api = useMemo(
    () =>
      key === null
        ? null
        : createApiClient(key, {
            onUnauthorized: (message) => signOut(`You were signed out: ${message}`),
          }),
    [key, signOut],
  );

  if (!api) {
    return (
      <SignInPage
        notice={notice}
        forAuthorize={isAuthorizeRequest(location.search)}
        onSignedIn={(newKey) => {
          saveSessionKey(newKey);
          setNotice(null);
          setKey(newKey);
        }}
      />
    );
  }
  return (
    <ApiContext.Provider value={api}>
      {isAuthorizeRequest(location.search) ? (
        <AuthorizePage onSignOut={() => signOut(null)} />
      ) : (
        <AppShell onSignOut={() => signOut(null)} />
      )}
    </ApiContext.Provider>
  );
}
