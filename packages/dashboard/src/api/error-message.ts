/**
 * The human message of an error body: the gateway's envelope `{error: {code, message}}`, or the
 * RFC 6749 shape `{error, error_description}` of the OAuth endpoints; a generic line otherwise.
 */
export function errorMessageOf(body: unknown, status: number): string {
  if (isObject(body)) {
    const { error } = body;
    if (isObject(error)) {
      if (typeof error.message === 'string' && error.message !== '') return error.message;
      if (typeof error.code === 'string') return error.code;
    }
    if (typeof error === 'string') {
      const description = body.error_description;
      return typeof description === 'string' && description !== '' ? `${error}: ${description}` : error;
    }
  }
  return `The gateway answered HTTP ${status}.`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
