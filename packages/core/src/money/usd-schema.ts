import { z } from 'zod';
import { parseUsdToMicros } from './micros.js';

/**
 * A zod schema for a USD amount that comes out as integer micros, parsed exactly (at most six
 * decimals, never through a float). Config files may give strings or numbers; the API takes numbers.
 */
export function usdMicrosSchema(options: { positive: boolean; allowString: boolean }) {
  const input = options.allowString ? z.union([z.string(), z.number()]) : z.number();
  return input.transform((value, ctx) => {
    try {
      const micros = parseUsdToMicros(value);
      if (options.positive && micros <= 0) {
        ctx.addIssue({ code: 'custom', message: 'must be greater than 0' });
        return z.NEVER;
      }
      return micros;
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message });
      return z.NEVER;
    }
  });
}
