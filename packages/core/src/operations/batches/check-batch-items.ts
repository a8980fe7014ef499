import type { AuthContext } from '../../auth/authenticate.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { GatewayDeps } from '../../gateway-deps.js';
import type { ReadOnce, Route } from '../../http/route.js';
import { validate } from '../../http/validate.js';
import type { BatchEndpoint } from '../../storage/batches.js';
import { chatCompletionsRoute } from '../chat/chat-completions-route.js';
import { embeddingsRoute } from '../embeddings/embeddings-route.js';
import type { CreateBatchBody } from './batch-schemas.js';

/** The route each batch endpoint's items are validated by (and, when run, served by). */
const ITEM_ROUTES: Record<BatchEndpoint, Route> = {
  '/v1/chat/completions': chatCompletionsRoute,
  '/v1/embeddings': embeddingsRoute,
};

/**
 * Validates every item of a batch as the endpoint validates a direct request (a preset it names
 * merged in first), before anything is stored: the first bad item refuses the whole batch
 * with `400 invalid_request` naming its index. Also refuses a repeated `custom_id` and `stream`.
 * Items are stored as sent; each is resolved and validated again when it runs.
 */
export async function checkBatchItems(
  body: CreateBatchBody,
  auth: AuthContext,
  deps: GatewayDeps,
): Promise<void> {
  const route = ITEM_ROUTES[body.endpoint];
  const schema = route.body;
  if (!schema) throw new Error(`route ${route.path} declares no body`);
  const seen = new Map<string, number>();
  // The features' `resolve` stage, as a direct request's body goes through it; what the items
  // read in it (a preset they name) is read once for the whole batch.
  const scope = { auth, deps, readOnce: readsOncePerBatch() };
  const resolve = (raw: unknown) => (route.resolveBody ? route.resolveBody(raw, scope) : raw);
  for (const [index, item] of body.requests.entries()) {
    const where = `requests[${index}]`;
    const first = seen.get(item.custom_id);
    if (first !== undefined) {
      throw new GatewayError(
        'invalid_request',
        `${where}.custom_id: must be unique in the batch (the same as requests[${first}].custom_id).`,
      );
    }
    seen.set(item.custom_id, index);
    if (item.body.stream === true) {
      throw new GatewayError(
        'invalid_request',
        `${where}.body.stream: a batch item cannot stream; leave stream unset or false.`,
      );
    }
    try {
      validate(schema, await resolve(item.body), 'body');
    } catch (error) {
      if (!(error instanceof GatewayError)) throw error;
      throw new GatewayError('invalid_request', `${where}: ${error.message}`);
    }
  }
}

/** One batch's shared reads: each key read once, however many items ask for it. */
function readsOncePerBatch(): ReadOnce {
  const reads = new Map<string, Promise<unknown>>();
  return <T>(key: string, read: () => Promise<T>): Promise<T> => {
    let found = reads.get(key);
    if (!found) {
      found = read();
      reads.set(key, found);
    }
    return found as Promise<T>;
  };
}
