import type { Feature } from '../../pipeline/feature.js';
import { guardInput } from './apply-guardrails.js';
import { guardrailsRoutes } from './guardrails-routes.js';
import type { OutputGuard } from './output-guard.js';

/**
 * Guardrails: `/v1/guardrails`, and the account's rules in the metered call. Before the hold, the
 * input rules (a match: `422`, nothing held); then the output rules on the answer (settled as a
 * charge for the tokens, the `422` answered instead), on a short-circuit's answer (uncharged), and
 * on each chunk of a stream (stopped before the chunk that completed the match).
 */
export const guardrailsFeature: Feature = {
  name: 'guardrails',
  routes: guardrailsRoutes,
  open({ auth, deps, record, body }) {
    // Accounts without rules cost no read.
    if (auth.guardrails === 0) return null;
    let output: OutputGuard | null = null;
    return {
      async beforeHold() {
        output = await guardInput(deps, auth, record, body);
        return null;
      },
      checkAnswer: (answer, onRecord, kind) =>
        (kind === 'answer' ? output?.checkAnswer(answer, onRecord) : output?.checkCached(answer, onRecord)) ??
        null,
      watch: (onRecord) => output?.watch(onRecord) ?? null,
    };
  },
};
