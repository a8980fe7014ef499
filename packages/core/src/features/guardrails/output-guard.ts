import { GatewayError } from '../../errors/gateway-error.js';
import type { GuardrailStage, GuardrailVerdict } from '../../storage/guardrails.js';
import type { RequestRecord } from '../../storage/metering-types.js';
import type { CompiledRule } from './compile-rule.js';
import { answerTexts, chunkPieces } from './request-texts.js';

/**
 * How much of a streamed text is matched again with each new piece, so a match split across
 * chunks is caught. Built-in categories match far less than this; a user `regex` whose match is
 * longer than this and split across chunks can slip through on a stream (never on a whole answer).
 */
export const STREAM_WINDOW_CHARS = 4096;

/** The rules among `rules` that match any of `texts`, as verdicts (each rule once). */
export function verdictsOf(rules: readonly CompiledRule[], texts: readonly string[]): GuardrailVerdict[] {
  const fired: GuardrailVerdict[] = [];
  for (const { rule, matches } of rules) {
    if (texts.some((text) => matches(text))) {
      fired.push({ rule_id: rule.id, name: rule.name, category: rule.category, stage: rule.stage });
    }
  }
  return fired;
}

/**
 * `422 guardrail_blocked`, naming the first rule that fired and saying whether the request was
 * charged (an input block never is; an output block is, for the tokens produced). Never the text.
 */
export function guardrailBlocked(
  verdicts: readonly GuardrailVerdict[],
  stage: GuardrailStage | 'cached output',
): GatewayError {
  const name = verdicts[0]?.name ?? 'unknown';
  const message = {
    input: `The guardrail "${name}" blocked the request's input. The request was not charged.`,
    output: `The guardrail "${name}" blocked the model's answer. The request was charged for the tokens the model produced.`,
    'cached output': `The guardrail "${name}" blocked the cached answer to this request. The request was not charged.`,
  }[stage];
  return new GatewayError('guardrail_blocked', message);
}

/** The account's output-stage rules, applied to an answer or a stream. */
export class OutputGuard {
  constructor(readonly rules: readonly CompiledRule[]) {}

  /**
   * A whole answer (the operation's `respond` body): the error to answer with when a rule fires
   * (the verdict added to the record), else `null`.
   */
  checkAnswer(answer: Record<string, unknown>, record: RequestRecord): GatewayError | null {
    return this.block(verdictsOf(this.rules, answerTexts(answer)), record);
  }

  /**
   * A response-cache hit, before it is served: an answer kept before a rule existed must not get
   * past it. The error (uncharged: a hit consumes nothing) when a rule fires, else `null`.
   */
  checkCached(answer: Record<string, unknown>, record: RequestRecord): GatewayError | null {
    return this.block(verdictsOf(this.rules, answerTexts(answer)), record, 'cached output');
  }

  /**
   * A watcher of one stream: `see(chunk)` before the chunk is forwarded answers the error once the
   * text so far (this chunk included) matches a rule (the verdict added to the record), else `null`.
   */
  watch(record: RequestRecord): { see(chunk: unknown): GatewayError | null } {
    const tails = new Map<string, string>();
    return {
      see: (chunk) => {
        const texts: string[] = [];
        for (const { key, text } of chunkPieces(chunk)) {
          const joined = (tails.get(key) ?? '') + text;
          texts.push(joined);
          tails.set(key, tailOf(joined));
        }
        return texts.length === 0 ? null : this.block(verdictsOf(this.rules, texts), record);
      },
    };
  }

  private block(
    verdicts: GuardrailVerdict[],
    record: RequestRecord,
    stage: 'output' | 'cached output' = 'output',
  ): GatewayError | null {
    if (verdicts.length === 0) return null;
    record.guardrails.push(...verdicts);
    return guardrailBlocked(verdicts, stage);
  }
}

/**
 * The end of a text kept to be matched with what follows: the last `STREAM_WINDOW_CHARS`, cut after
 * a whitespace so no word or number is kept half (a half number could pass a check the whole fails).
 */
function tailOf(text: string): string {
  if (text.length <= STREAM_WINDOW_CHARS) return text;
  const tail = text.slice(-STREAM_WINDOW_CHARS);
  const space = tail.search(/\s/);
  return space === -1 ? tail : tail.slice(space + 1);
}
