import { z } from 'zod';

const LIMIT_MESSAGE = 'must be an integer from 1 to 200';

/**
 * The `limit` query parameter of the paged lists (`GET /v1/ledger`, `GET /v1/generations`): an
 * integer from 1 to 200 written in digits, 50 when absent.
 */
export const pageLimitSchema = z
  .string()
  .regex(/^\d+$/, LIMIT_MESSAGE)
  .transform(Number)
  .pipe(z.int().min(1, LIMIT_MESSAGE).max(200, LIMIT_MESSAGE))
  .default(50);
