import type { z } from 'zod';

/**
 * The first issue of a failed parse as `path: message`, for logs and error messages. Zod's messages
 * name what was expected, never the value received, so no answer content leaks through.
 */
export function describeSchemaError(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'unexpected shape';
  const path = issue.path.length > 0 ? issue.path.join('.') : '(root)';
  return `${path}: ${issue.message}`;
}
