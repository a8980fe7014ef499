import { useState } from 'preact/hooks';
import { ErrorBanner } from '../ui/error-banner.js';
import { verifyProvisioningKey } from './verify-key.js';

interface Props {
  /** Why the last session ended (a 401), shown above the form. */
  notice: string | null;
  /** The sign-in stands before an OAuth approve page, which follows once signed in. */
  forAuthorize: boolean;
  onSignedIn: (key: string) => void;
}

/** Asks for a provisioning key and signs in once the gateway confirms its scope. */
export function SignInPage({ notice, forAuthorize, onSignedIn }: Props) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    const trimmed = key.trim();
    if (trimmed === '') return setError('Enter a provisioning key (gw_live_… or gw_test_…).');
    setBusy(true);
    setError(null);
    const verified = await verifyProvisioningKey(trimmed);
    setBusy(false);
    if (verified.ok) onSignedIn(trimmed);
    else setError(verified.message);
  }

  return (
    <main class="sign-in">
      <h1>Tollgate</h1>
      {forAuthorize && <p>An application asks for access to your account: sign in to review it.</p>}
      <p>Sign in with a provisioning key. It is kept in this tab only and forgotten when you sign out.</p>
      {notice && !error && <p class="notice">{notice}</p>}
      <ErrorBanner message={error} />
      <form onSubmit={submit}>
        <label for="signin-key">Provisioning key</label>
        <input
          id="signin-key"
          data-testid="signin-key"
          type="password"
          autocomplete="off"
          spellcheck={false}
          placeholder="gw_live_…"
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
        />
        <button type="submit" data-testid="signin-submit" disabled={busy}>
          {busy ? 'Checking…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
