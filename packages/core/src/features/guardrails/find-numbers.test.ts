import { describe, expect, it } from 'vitest';
import { hasPaymentCard, hasPhoneNumber, luhnValid } from './find-numbers.js';

describe('luhnValid', () => {
  it.each([
    ['4111111111111111', true],
    ['4111111111111112', false],
    ['79927398713', true],
    ['5555555555554444', true],
  ])('luhnValid - %s is %s', (digits, valid) => {
    expect(luhnValid(digits)).toBe(valid);
  });
});

describe('hasPaymentCard', () => {
  it.each([
    ['my card is 4111111111111111.', true],
    ['4111 1111 1111 1111', true],
    ['4111-1111-1111-1111', true],
    ['card:5555555555554444 exp 12/29', true],
    ['4111 1111 1111 1111 2029', true],
    ['Amex 3782 822463 10005', true],
    ['4111111111111112 fails Luhn', false],
    ['4111  1111  1111  1111 (double spaces)', false],
    ['only 12 digits 411111111111', false],
    ['order 20240115 at 1030', false],
    ['', false],
  ])('hasPaymentCard - %j is %s', (text, found) => {
    expect(hasPaymentCard(text)).toBe(found);
  });
});

describe('hasPhoneNumber', () => {
  it.each([
    ['call +1 (555) 123-4567 now', true],
    ['+44 20 7946 0958', true],
    ['555.123.4567', true],
    ['5551234567', true],
    ['+4915112345678', true],
    ['call 555-1234', false],
    ['at 2024-01-15 10:30', false],
    ['on 15.01.2024 1030 h', false],
    ['a 16-digit number 1234567890123456', false],
    ['', false],
  ])('hasPhoneNumber - %j is %s', (text, found) => {
    expect(hasPhoneNumber(text)).toBe(found);
  });

  it('hasPhoneNumber - scans a long digit-heavy text in bounded time', () => {
    const text = '1 '.repeat(200_000);
    const started = performance.now();
    hasPhoneNumber(text);
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
