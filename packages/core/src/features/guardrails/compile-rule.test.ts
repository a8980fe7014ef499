import { describe, expect, it } from 'vitest';
import type { Guardrail, GuardrailCategory } from '../../storage/guardrails.js';
import { compileRule, keywordPattern, patternProblem } from './compile-rule.js';

const rule = (category: GuardrailCategory, pattern: string | null = null): Guardrail => ({
  id: 'grd_1',
  accountId: 'acct_1',
  name: 'rule',
  stage: 'input',
  category,
  pattern,
  createdAt: 0,
});
const matches = (r: Guardrail, text: string) => compileRule(r).matches(text);

describe('compileRule', () => {
  it.each([
    ['write to jane.doe+x@example.co.uk please', true],
    ['no address @ here', false],
    ['user@localhost', false],
  ])('email - %j is %s', (text, found) => {
    expect(matches(rule('email'), text)).toBe(found);
  });

  it.each([
    ['this is Top Secret stuff', true],
    ['TOP SECRET', true],
    ['topsecret', false],
    ['top secrets', false],
  ])('keyword "top secret" - case-insensitive on word boundaries: %j is %s', (text, found) => {
    expect(matches(rule('keyword', 'top secret'), text)).toBe(found);
  });

  it('keyword - quotes the keyword (no regex meaning) and bounds only word ends', () => {
    expect(keywordPattern('c++')).toBe('\\bc\\+\\+');
    expect(matches(rule('keyword', 'c++'), 'I write C++ daily')).toBe(true);
    expect(matches(rule('keyword', 'a.b'), 'axb')).toBe(false);
  });

  it('regex - runs the user pattern', () => {
    expect(matches(rule('regex', 'ACME-\\d{4}'), 'ticket ACME-1234')).toBe(true);
    expect(matches(rule('regex', 'ACME-\\d{4}'), 'ticket acme-1234')).toBe(false);
    expect(matches(rule('regex', '(?i)acme'), 'ACME')).toBe(true);
  });

  it('regex - a catastrophic pattern ((a+)+$ on 50,000 a then !) runs in bounded time', () => {
    const r = rule('regex', '(a+)+$');
    expect(patternProblem('regex', r.pattern)).toBeNull();
    const started = performance.now();
    expect(matches(r, `${'a'.repeat(50_000)}!`)).toBe(false);
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

describe('patternProblem', () => {
  it.each([
    ['payment_card', null, null],
    ['payment_card', 'x', 'takes no pattern'],
    ['email', '', 'takes no pattern'],
    ['regex', null, 'needs a pattern'],
    ['keyword', '  ', 'needs a pattern'],
    ['regex', '(a)\\1', 'not a regular expression'],
    ['regex', '(?=a)', 'not a regular expression'],
    ['regex', '[', 'not a regular expression'],
    ['regex', 'x'.repeat(1001), 'over 1000'],
    ['keyword', '(unbalanced', null],
  ] as const)('%s with %j: %s', (category, pattern, problem) => {
    const found = patternProblem(category, pattern);
    if (problem === null) expect(found).toBeNull();
    else expect(found).toContain(problem);
  });
});
