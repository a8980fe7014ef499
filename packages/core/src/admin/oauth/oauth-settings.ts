/** How long a `client_credentials` token lives unless the config says otherwise (product.md). */
export const DEFAULT_CLIENT_CREDENTIALS_TTL_S = 3_600;

/** What the OAuth endpoints need to know of the deployment, resolved once per gateway. */
export interface OAuthSettings {
  /**
   * The gateway's public address, the metadata's `issuer` (no trailing slash), or `undefined` while
   * it is unknown (then the metadata is not served). Asked per request: a server listening on port 0
   * knows its address only once it listens.
   */
  issuer: () => string | undefined;
  /** The page where an account holder approves a client: absolute, or a path under the issuer. */
  approvePage: string | undefined;
  /** How long a `client_credentials` token lives. */
  clientCredentialsTtlMs: number;
}

/** The gateway's public URL: a fixed one, or asked for on each request; unset: unknown. */
export type PublicUrl = string | (() => string | undefined) | undefined;

/** The settings of a gateway's options (`publicUrl`, `oauth`): no trailing slash, the defaults. */
export function oauthSettings(
  publicUrl: PublicUrl,
  oauth: { approvePage?: string; clientCredentialsTtlS?: number } = {},
): OAuthSettings {
  const resolve = typeof publicUrl === 'function' ? publicUrl : () => publicUrl;
  return {
    issuer: () => resolve()?.replace(/\/+$/, '') || undefined,
    approvePage: oauth.approvePage,
    clientCredentialsTtlMs: (oauth.clientCredentialsTtlS ?? DEFAULT_CLIENT_CREDENTIALS_TTL_S) * 1000,
  };
}
