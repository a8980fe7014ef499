import { GatewayError } from '../../errors/gateway-error.js';

/**
 * `400 invalid_request` for one field of the Responses body, worded as the body validation words
 * its own (`Invalid request body. body.input[2].call_id: must be a string`). Quotes no content (a tool's name at most).
 */
export function invalidField(field: string, message: string): GatewayError {
  return new GatewayError('invalid_request', `Invalid request body. body.${field}: ${message}.`);
}
