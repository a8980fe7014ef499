/**
 * What a gateway may keep of an authentication (a key, its account, the account's BYOK and
 * guardrail counts: `KeyAndAccount`) goes stale when one of these operations changes it. Each entry
 * says whose: the account id, read from the operation's arguments, or `null` for "any account"
 * (the caller then forgets every account).
 */
export const AUTH_CHANGING_OPERATIONS = {
  setAccountSuspended: (args) => stringArg(args[0]),
  updateApiKey: (args) => stringArg(args[0]),
  revokeApiKey: (args) => stringArg(args[0]),
  createByokKey: (args) => accountIdOf(args[0]),
  deleteByokKey: (args) => stringArg(args[0]),
  createGuardrail: (args) => accountIdOf(args[0]),
  deleteGuardrail: (args) => stringArg(args[0]),
  // A replayed code revokes the key its first use minted, of an account the arguments do not name.
  redeemOAuthCode: () => null,
  // The client's keys minted by codes belong to the accounts that approved them, not only its own.
  deleteOAuthClient: () => null,
} satisfies Record<string, (args: readonly unknown[]) => string | null>;

type AuthChangingOperation = keyof typeof AUTH_CHANGING_OPERATIONS;

/** Whose cached authentication a change touched: an account id, or `null` for every account. */
export type AuthChange = string | null;

/**
 * A storage that tells its gateway when an authentication changed: its own changes at once, other
 * processes' as its database carries them (Postgres: `LISTEN`/`NOTIFY`; SQLite: not at all, see
 * `PROCESS_LOCAL_CHANNEL`). With it a gateway may cache authentications (`authCacheMs`), whose TTL
 * bounds how long a change that was not heard goes unseen; without it, it never does.
 */
export interface AuthChangeFeed {
  /**
   * Calls `listener` for every change made through any storage on this database until the returned
   * function is called: a change made through this storage object before the operation returns,
   * any other once the database's notification arrives (if it carries any). Resolves once listening.
   */
  subscribeAuthChanges(listener: (change: AuthChange) => void): Promise<() => Promise<void>>;
}

/**
 * `storage` with every `AUTH_CHANGING_OPERATIONS` call followed, once it has resolved and before
 * its result reaches the caller, by `onChange` with the account it touched. Every other operation
 * is the storage's own.
 */
export function afterAuthChanges<S extends object>(storage: S, onChange: (change: AuthChange) => unknown): S {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(storage, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      const accountOf = AUTH_CHANGING_OPERATIONS[name as AuthChangingOperation];
      if (accountOf === undefined || typeof value !== 'function') return value;
      let method = wrapped.get(name);
      if (method === undefined) {
        method = async (...args: unknown[]) => {
          const result = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          await onChange(accountOf(args));
          return result;
        };
        wrapped.set(name, method);
      }
      return method;
    },
  });
}

function stringArg(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function accountIdOf(input: unknown): string | null {
  return typeof input === 'object' && input !== null && 'accountId' in input
    ? stringArg((input as { accountId: unknown }).accountId)
    : null;
}
