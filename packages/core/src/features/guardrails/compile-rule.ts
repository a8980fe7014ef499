import { RE2JS } from 're2js';
import type { Guardrail, GuardrailCategory } from '../../storage/guardrails.js';
import { hasPaymentCard, hasPhoneNumber } from './find-numbers.js';

/**
 * Turns a rule into a test on text. User patterns (`regex`, `keyword`) run on RE2 (`re2js`, a
 * pure-JS port): linear time in the text whatever the pattern, so no pattern can stall the event
 * loop; constructs RE2 cannot run in linear time (backreferences, lookaround) are refused when the
 * rule is created.
 */

/** The longest `pattern` a rule may have. */
const MAX_PATTERN_CHARS = 1000;

/** A rule ready to test text with. */
export interface CompiledRule {
  rule: Guardrail;
  matches(text: string): boolean;
}

// Linear on RE2; deliberately loose (what matters is not letting an address through).
const EMAIL = RE2JS.compile('[A-Za-z0-9._%+\\-]+@[A-Za-z0-9\\-]+(?:\\.[A-Za-z0-9\\-]+)*\\.[A-Za-z]{2,}');

/** Why this pattern cannot be a rule of this category, or `null` when it can. */
export function patternProblem(
  category: GuardrailCategory,
  pattern: string | null | undefined,
): string | null {
  const takesPattern = category === 'regex' || category === 'keyword';
  if (!takesPattern) {
    return pattern == null ? null : `A ${category} guardrail takes no pattern.`;
  }
  if (typeof pattern !== 'string' || pattern.trim() === '') return `A ${category} guardrail needs a pattern.`;
  if (pattern.length > MAX_PATTERN_CHARS) return `The pattern is over ${MAX_PATTERN_CHARS} characters.`;
  if (category === 'keyword') return null;
  try {
    RE2JS.compile(pattern);
    return null;
  } catch (error) {
    return `The pattern is not a regular expression this gateway runs (RE2 syntax, no backreferences or lookaround): ${(error as Error).message}`;
  }
}

/** The test of one rule. Throws for a pattern `patternProblem` refuses. */
export function compileRule(rule: Guardrail): CompiledRule {
  return { rule, matches: matcherOf(rule) };
}

function matcherOf(rule: Guardrail): (text: string) => boolean {
  switch (rule.category) {
    case 'payment_card':
      return hasPaymentCard;
    case 'phone':
      return hasPhoneNumber;
    case 'email':
      return (text) => EMAIL.matcher(text).find();
    case 'keyword': {
      const re = RE2JS.compile(keywordPattern(rule.pattern ?? ''), RE2JS.CASE_INSENSITIVE);
      return (text) => re.matcher(text).find();
    }
    case 'regex': {
      const re = RE2JS.compile(rule.pattern ?? '');
      return (text) => re.matcher(text).find();
    }
  }
}

/** The keyword, quoted, with a word boundary on each side that begins or ends with a word character. */
export function keywordPattern(keyword: string): string {
  const word = /\w/;
  const trimmed = keyword.trim();
  const start = word.test(trimmed[0] ?? '') ? '\\b' : '';
  const end = word.test(trimmed.at(-1) ?? '') ? '\\b' : '';
  return `${start}${RE2JS.quote(trimmed)}${end}`;
}
