import { type Account, createApiKey, type KeyEnv, type Storage, topUpAccount } from '@tollgate/core';

/** An account with credit, a provisioning key and an inference key, made directly in storage. */
export interface Tenant {
  account: Account;
  provisioningKey: string;
  provisioningKeyId: string;
  inferenceKey: string;
  inferenceKeyId: string;
}

export interface TenantOptions {
  creditMicros?: number;
  env?: KeyEnv;
  monthlyLimitMicros?: number | null;
  defaultRpm?: number | null;
  name?: string;
}

/** An account with credit (no fee), one provisioning key and one inference key. */
export async function createTenant(storage: Storage, options: TenantOptions = {}): Promise<Tenant> {
  const env = options.env ?? 'live';
  const account = await storage.createAccount({
    name: options.name ?? 'e2e tenant',
    monthlyLimitMicros: options.monthlyLimitMicros ?? null,
    defaultRpm: options.defaultRpm ?? null,
  });
  const creditMicros = options.creditMicros ?? 10_000_000;
  if (creditMicros > 0) await topUpAccount(storage, account.id, creditMicros, 0);
  const provisioning = await createApiKey(storage, {
    accountId: account.id,
    name: 'provisioning',
    scope: 'provisioning',
    env,
  });
  const inference = await createApiKey(storage, {
    accountId: account.id,
    name: 'inference',
    scope: 'inference',
    env,
  });
  return {
    account: (await storage.getAccount(account.id)) ?? account,
    provisioningKey: provisioning.secret,
    provisioningKeyId: provisioning.key.id,
    inferenceKey: inference.secret,
    inferenceKeyId: inference.key.id,
  };
}
