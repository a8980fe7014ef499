import type { MeteredCall } from '../../pipeline/call.js';
import type { CacheRequest } from './cache-request.js';
import { storeCachedAnswer } from './cached-answer.js';

/** Keeps a settled answer in the account's response cache, with what it would have cost. */
export async function keepAnswer(
  call: MeteredCall,
  cache: CacheRequest,
  answer: Record<string, unknown>,
  finishReason: string | null,
): Promise<void> {
  const { record, deps } = call;
  if (!call.usage || record.status !== 'success' || !record.model || !record.provider) return;
  await storeCachedAnswer(
    deps,
    call.auth.account.id,
    cache,
    {
      answer,
      model: record.model,
      provider: record.provider,
      usage: call.usage,
      finishReason,
      costMicros: record.costMicros + record.savedMicros,
    },
    deps.now(),
  );
}
