/** What a demo endpoint answers the in-process HTTP client: a status and a JSON body. */
export interface DemoJsonAnswer {
  status: number;
  body: unknown;
}

/** A `400` in OpenAI's error shape, as an upstream refuses a body it cannot serve. */
export function invalidRequest(message: string): DemoJsonAnswer {
  return { status: 400, body: { error: { message, type: 'invalid_request_error', code: null } } };
}
