import type { EpochMs, Micros } from './scalars.js';

/**
 * The storage of OAuth: the clients an account registers and the authorization codes an account
 * holder approves. Same conventions as `Storage` (see types.ts); clients and codes are also looked up
 * globally (by client id, by code hash), since the token endpoint knows no account. Neither a client
 * secret nor a code is ever stored in clear: only the SHA-256 of each.
 */

/** A client registered by an account: an application that may ask for inference keys. */
export interface OAuthClient {
  /** `client_…`, chosen by the caller. */
  id: string;
  /** The account that registered the client (`client_credentials` mints keys of this account). */
  accountId: string;
  name: string;
  /** Where an approved code may be sent, each exactly as registered (compared as strings). */
  redirectUris: string[];
  /** Lower-case hex SHA-256 of the client secret. */
  secretHash: string;
  createdAt: EpochMs;
}

export type NewOAuthClient = OAuthClient;

/** An authorization code an account holder approved; stored by its hash, redeemable once. */
export interface OAuthCode {
  /** Lower-case hex SHA-256 of the code. */
  codeHash: string;
  clientId: string;
  /** The approving account: the key a redemption mints belongs to it. */
  accountId: string;
  /** The redirect URI the code was approved for; the redemption must name the same one. */
  redirectUri: string;
  /** The PKCE S256 challenge (43 base64url characters). */
  codeChallenge: string;
  /** The spend limit of the key a redemption mints; `null` = no limit. */
  spendLimitMicros: Micros | null;
  createdAt: EpochMs;
  /** Redeemable while `expiresAt > now`. */
  expiresAt: EpochMs;
  /** When the code was redeemed, or `null`. */
  usedAt: EpochMs | null;
  /** The key its redemption minted, or `null`. */
  keyId: string | null;
}

export type NewOAuthCode = Omit<OAuthCode, 'usedAt' | 'keyId'>;

/** The key a redemption mints; its account and spend limit are the code's. */
export interface OAuthMintedKey {
  name: string;
  /** `KeyEnv` (spelled out here: types.ts imports this file). */
  env: 'live' | 'test';
  /** Lower-case hex SHA-256 of the full key string. */
  hash: string;
  prefix: string;
}

/** What `redeemOAuthCode` did. */
export type OAuthRedemption =
  /** The code was live and unused: it is used now, and this inference key was minted for it. */
  | { outcome: 'redeemed'; keyId: string }
  /** The code had been redeemed before: nothing minted, and the key of the first redemption revoked. */
  | { outcome: 'replayed'; revokedKeyId: string | null }
  /** The code expired unused: nothing changed. */
  | { outcome: 'expired' }
  /** No code has this hash (never issued, swept, or its client deleted). */
  | { outcome: 'unknown' };

/** What `issueClientCredentialsKey` did. */
export type ClientCredentialsIssue =
  /** A new key was minted with the given hash and expiry. */
  | { outcome: 'minted'; keyId: string }
  /** The client's live key was handed out again: it expires at `expiresAt`. */
  | { outcome: 'existing'; keyId: string; expiresAt: EpochMs }
  /** No client has this id. */
  | { outcome: 'unknown_client' };

export interface OAuthStorage {
  /**
   * Stores a client (`createdAt` as given). Rejects when the account does not exist or the id is
   * taken.
   */
  createOAuthClient(input: NewOAuthClient): Promise<OAuthClient>;

  /** The account's clients, oldest first (by `createdAt`, then id). */
  listOAuthClients(accountId: string): Promise<OAuthClient[]>;

  /** One client by id, whatever its account (the authorize and token endpoints), or `null`. */
  getOAuthClient(clientId: string): Promise<OAuthClient | null>;

  /**
   * Deletes a client of the account and, in the same transaction, its codes (so none can be
   * redeemed any more) and revokes every key minted for it, by either grant and of any account
   * (`revoked`, `disabled`; the rows stay). Serialises with `redeemOAuthCode` and
   * `issueClientCredentialsKey` of the client, so no key minted concurrently escapes. False when the
   * client is not the account's (or gone).
   */
  deleteOAuthClient(accountId: string, clientId: string): Promise<boolean>;

  /** Stores a code, unused. Rejects when the client or the account does not exist, or the hash is taken. */
  createOAuthCode(input: NewOAuthCode): Promise<void>;

  /** One code by its hash, used or not, expired or not (until swept), or `null`. */
  getOAuthCode(codeHash: string): Promise<OAuthCode | null>;

  /**
   * Redeems a code, atomically, in one transaction that serialises with every other redemption of
   * the same code: a live unused code (`expiresAt > now`) is marked used (`usedAt = now`), an
   * inference key of the code's account with the code's spend limit, never expiring, minted for the
   * code's client (`oauthClientId`), is inserted, and its id is recorded on the code — all or
   * nothing (`redeemed`). A code already used (whether or not it has expired since) is a replay:
   * nothing is minted and the key of the first redemption is revoked in the same transaction
   * (`replayed`; RFC 6749 §4.1.2). Of N concurrent redemptions of one code, exactly one mints a key
   * and the others are replays. An expired unused code changes nothing (`expired`). Rejects when the
   * key hash is taken.
   */
  redeemOAuthCode(input: { codeHash: string; now: EpochMs; key: OAuthMintedKey }): Promise<OAuthRedemption>;

  /**
   * The key a `client_credentials` grant hands out, in one transaction that locks the client's row,
   * so it serialises with the client's other grants and with its deletion. Of the client's keys
   * that expire (only this grant's do), the enabled one that expires last, provided it is still
   * valid at `validAt`, is handed out again (`existing`, with its expiry); else an inference key of
   * the client's account, named as given, with no spend limit, expiring at `expiresAt`, minted for
   * the client, is inserted (`minted`). Of N concurrent calls, one mints and the others get its key.
   * `unknown_client` when the client is gone (a deleted client gets no key).
   */
  issueClientCredentialsKey(input: {
    clientId: string;
    validAt: EpochMs;
    expiresAt: EpochMs;
    key: OAuthMintedKey;
  }): Promise<ClientCredentialsIssue>;
}
