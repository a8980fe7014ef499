import type { AuthContext } from '../../auth/authenticate.js';
import type { GatewayDeps } from '../../gateway-deps.js';
import type { RequestRecord } from '../../storage/metering-types.js';
import { type CompiledRule, compileRule } from './compile-rule.js';
import { guardrailBlocked, OutputGuard, verdictsOf } from './output-guard.js';
import { requestTexts } from './request-texts.js';

/**
 * Input stage, before the pre-flight: the account's input rules are matched against every text of
 * the request; a match throws `422 guardrail_blocked` (the pipeline records the refusal, with the
 * verdict; nothing is held, charged or sent upstream). Returns the account's output rules (or
 * `null`), for the answer. Accounts without rules cost no read (`auth.guardrails` is 0).
 */
export async function guardInput(
  deps: Pick<GatewayDeps, 'storage'>,
  auth: AuthContext,
  record: RequestRecord,
  body: Record<string, unknown>,
): Promise<OutputGuard | null> {
  if (auth.guardrails === 0) return null;
  const rules: CompiledRule[] = [];
  for (const rule of await deps.storage.listGuardrails(auth.account.id)) {
    try {
      rules.push(compileRule(rule));
    } catch {
      // Refused at creation; a rule stored by other means that RE2 cannot run is skipped.
    }
  }
  const input = rules.filter((r) => r.rule.stage === 'input');
  if (input.length > 0) {
    const verdicts = verdictsOf(input, requestTexts(body));
    if (verdicts.length > 0) {
      record.guardrails.push(...verdicts);
      throw guardrailBlocked(verdicts, 'input');
    }
  }
  const output = rules.filter((r) => r.rule.stage === 'output');
  return output.length > 0 ? new OutputGuard(output) : null;
}
