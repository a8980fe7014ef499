import { describe, expect, it } from 'vitest';
import type { ApiKey } from '../api/api-types.js';
import { keyActions, keyStatus } from './key-status.js';

const NOW = Date.parse('2026-12-01T12:00:00Z');
const key = (fields: Partial<ApiKey> = {}) =>
  ({
    id: 'key_a',
    scope: 'provisioning',
    disabled: false,
    revoked: false,
    expires_at: null,
    ...fields,
  }) as ApiKey;

describe('keyStatus', () => {
  it('active, disabled, revoked (disabled too), expired from its expires_at on', () => {
    expect(keyStatus(key(), NOW)).toBe('active');
    expect(keyStatus(key({ disabled: true }), NOW)).toBe('disabled');
    expect(keyStatus(key({ disabled: true, revoked: true }), NOW)).toBe('revoked');
    expect(keyStatus(key({ expires_at: '2026-12-01T12:00:00.001Z' }), NOW)).toBe('active');
    expect(keyStatus(key({ expires_at: '2026-12-01T12:00:00.000Z' }), NOW)).toBe('expired');
  });
});

describe('keyActions', () => {
  it('a revoked key offers neither Enable nor Revoke', () => {
    expect(keyActions(key({ disabled: true, revoked: true }), 'key_me')).toEqual({
      toggle: null,
      revoke: false,
    });
  });

  it('another key can be paused, resumed and revoked', () => {
    expect(keyActions(key(), 'key_me')).toEqual({ toggle: 'disable', revoke: true });
    expect(keyActions(key({ disabled: true }), 'key_me')).toEqual({ toggle: 'enable', revoke: true });
  });

  it('the signed-in key can be neither paused nor revoked; nor can any provisioning key until it is known', () => {
    expect(keyActions(key({ id: 'key_me' }), 'key_me')).toEqual({ toggle: null, revoke: false });
    expect(keyActions(key(), undefined)).toEqual({ toggle: null, revoke: false });
    expect(keyActions(key({ scope: 'inference' }), undefined)).toEqual({ toggle: 'disable', revoke: true });
  });
});
