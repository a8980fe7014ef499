import { describe, expect, it } from 'vitest';
import { errorMessageOf } from './error-message.js';

describe('errorMessageOf', () => {
  it('errorMessageOf - reads the gateway envelope message', () => {
    const body = { error: { code: 'not_found', message: 'No key "k_1".', type: 'x' } };
    expect(errorMessageOf(body, 404)).toBe('No key "k_1".');
  });

  it('errorMessageOf - falls back to the code when the message is empty', () => {
    expect(errorMessageOf({ error: { code: 'rate_limited', message: '' } }, 429)).toBe('rate_limited');
  });

  it('errorMessageOf - reads the RFC 6749 shape', () => {
    const body = { error: 'invalid_client', error_description: 'No OAuth client has this client_id.' };
    expect(errorMessageOf(body, 400)).toBe('invalid_client: No OAuth client has this client_id.');
    expect(errorMessageOf({ error: 'access_denied' }, 400)).toBe('access_denied');
  });

  it('errorMessageOf - names the status for a body it does not know', () => {
    expect(errorMessageOf('<html>', 502)).toBe('The gateway answered HTTP 502.');
    expect(errorMessageOf(null, 500)).toBe('The gateway answered HTTP 500.');
  });
});
