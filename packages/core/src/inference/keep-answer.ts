import { storeCachedAnswer } from '../response-cache/cached-answer.js';
import type { MeteredCall } from './metered-call.js';

/** Keeps a settled answer in the account's response cache, with what it would have cost. */
export async function keepAnswer(
  call: MeteredCall,
  answer: Record<string, unknown>,
  finishReason: string | null,
): Promise<void> {
  const { record, deps } = call;
  if (!call.cache || !call.usage || record.status !== 'success' || !record.model || !record.provider) return;
  await storeCachedAnswer(
    deps,
    call.auth.account.id,
    call.cache,
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
