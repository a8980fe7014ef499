import { useState } from 'preact/hooks';
import { useApi } from '../api/api-context.js';
import type { OAuthClientPreview } from '../api/api-types.js';
import { buildQuery } from '../api/query-string.js';
import { messageOf, useLoad } from '../api/use-load.js';
import { ErrorBanner } from '../ui/error-banner.js';
import { Field } from '../ui/field.js';
import {
  type AuthorizeParams,
  denyRedirectUrl,
  isRedirectTo,
  parseAuthorizeParams,
  parseSpendLimit,
} from './authorize-params.js';

/**
 * The OAuth approve page (`?client_id=…`): the client's name and redirect, an editable spend limit
 * for the key it will get, Approve and Deny. Deny redirects only once the gateway has confirmed
 * that the redirect_uri is registered for the client, so the page cannot be used as an open
 * redirect.
 */
export function AuthorizePage({ onSignOut }: { onSignOut: () => void }) {
  const parsed = parseAuthorizeParams(location.search);
  return (
    <main class="page authorize">
      <header class="authorize-head">
        <span class="brand">Tollgate</span>
        <button type="button" class="secondary" data-testid="signout" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      <h1>Authorize an application</h1>
      {parsed.ok ? <AuthorizeClient params={parsed.params} /> : <AuthorizeError message={parsed.message} />}
    </main>
  );
}

function AuthorizeError({ message }: { message: string | null }) {
  if (!message) return null;
  return (
    <div data-testid="authorize-error">
      <ErrorBanner message={message} />
    </div>
  );
}

function AuthorizeClient({ params }: { params: AuthorizeParams }) {
  const api = useApi();
  const preview = useLoad(
    (client) =>
      client.get<OAuthClientPreview>(
        `/v1/oauth/authorize${buildQuery({ client_id: params.clientId, redirect_uri: params.redirectUri })}`,
      ),
    [],
  );
  const [limit, setLimit] = useState(params.spendLimitUsd);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  if (preview.error) return <AuthorizeError message={preview.error} />;
  const client = preview.data;
  if (!client) return <p class="muted">Checking the application…</p>;

  async function approve(event: Event) {
    event.preventDefault();
    const spendLimit = parseSpendLimit(limit);
    if (!spendLimit.ok) return setError(spendLimit.message);
    setBusy(true);
    setError(null);
    try {
      const answer = await api.send<{ code: string; redirect_to: string }>('POST', '/v1/oauth/authorize', {
        client_id: params.clientId,
        redirect_uri: params.redirectUri,
        code_challenge: params.codeChallenge,
        code_challenge_method: 'S256',
        ...(params.state !== undefined && { state: params.state }),
        ...(spendLimit.value !== undefined && { spend_limit_usd: spendLimit.value }),
      });
      if (!isRedirectTo(answer.redirect_to, params.redirectUri)) {
        throw new Error('The gateway answered with a redirect that does not match this application.');
      }
      location.assign(answer.redirect_to);
    } catch (e) {
      setError(messageOf(e));
      setBusy(false);
    }
  }

  function deny() {
    try {
      const target = denyRedirectUrl(params.redirectUri, params.state);
      setBusy(true);
      location.assign(target);
    } catch (e) {
      setError(messageOf(e));
    }
  }

  return (
    <form class="authorize-form" onSubmit={approve}>
      <p>
        <strong data-testid="authorize-client-name">{client.name}</strong> asks for an inference key of your
        account. It can call models and spend your balance, up to the limit you set here.
      </p>
      <p>
        After you answer you go to <code class="break">{client.redirect_uri}</code>
      </p>
      <Field
        label="Spend limit for this application (USD, empty for none)"
        data-testid="authorize-limit"
        type="number"
        min="0"
        step="any"
        inputMode="decimal"
        placeholder="none"
        value={limit}
        onInput={(e) => setLimit(e.currentTarget.value)}
      />
      <AuthorizeError message={error} />
      <div class="actions">
        <button type="submit" data-testid="authorize-approve" disabled={busy}>
          Approve
        </button>
        <button type="button" class="secondary" data-testid="authorize-deny" disabled={busy} onClick={deny}>
          Deny
        </button>
      </div>
    </form>
  );
}
