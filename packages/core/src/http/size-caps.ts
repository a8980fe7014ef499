import { GatewayError } from '../errors/gateway-error.js';

/** A megabyte as product.md counts it: 2^20 bytes. */
export const MB = 1024 * 1024;

/**
 * `413 payload_too_large` for a request body or an attachment over its cap, stating both figures
 * in MB as product.md words it: `Request body is 12.4 MB; the limit is 10 MB.` (`over 10.2 MB` when
 * the input was cut off as soon as it passed the cap, its whole size unknown).
 */
export function tooLarge(
  what: 'Request body' | 'Request headers' | 'Attachment',
  sizeBytes: number,
  limitBytes: number,
  options: { atLeast?: boolean } = {},
): GatewayError {
  const [size, limit] = megabytes(sizeBytes, limitBytes);
  return new GatewayError(
    'payload_too_large',
    `${what} ${what === 'Request headers' ? 'are' : 'is'} ${options.atLeast ? 'over ' : ''}${size} MB; the limit is ${limit} MB.`,
  );
}

/**
 * Both sizes in MB with three significant digits (12.4, 10, 0.000977), more when three would make
 * them read the same (10.0001 against 10), so the caller can always tell them apart.
 */
function megabytes(a: number, b: number): [string, string] {
  const text = (bytes: number, digits: number) => Number((bytes / MB).toPrecision(digits)).toString();
  if (a === b) return [text(a, 3), text(b, 3)];
  for (let digits = 3; digits < 15; digits++) {
    if (text(a, digits) !== text(b, digits)) return [text(a, digits), text(b, digits)];
  }
  return [text(a, 15), text(b, 15)];
}
