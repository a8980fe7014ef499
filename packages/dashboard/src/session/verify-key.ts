import { createApiClient } from '../api/api-client.js';
import type { KeyInfo } from '../api/api-types.js';

export type Verified = { ok: true } | { ok: false; message: string };

/** Checks that `key` is a live provisioning key (`GET /v1/key`); explains what is wrong otherwise. */
export async function verifyProvisioningKey(key: string): Promise<Verified> {
  try {
    const { data } = await createApiClient(key).get<{ data: KeyInfo }>('/v1/key');
    if (data.scope === 'provisioning') return { ok: true };
    return {
      ok: false,
      message:
        'This is an inference key: it can call models but cannot manage keys. Sign in with a provisioning key.',
    };
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
}
