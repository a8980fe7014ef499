import { z } from 'zod';
import { GatewayError } from '../../errors/gateway-error.js';
import { defineRoute } from '../../http/route.js';
import { storedText } from '../../http/stored-text.js';
import type { Guardrail } from '../../storage/guardrails.js';
import { patternProblem } from './compile-rule.js';

const CATEGORIES = ['payment_card', 'email', 'phone', 'regex', 'keyword'] as const;

const newGuardrailBody = z
  .object({
    name: storedText().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
    stage: z.enum(['input', 'output'], 'must be "input" or "output"'),
    category: z.enum(CATEGORIES, `must be one of ${CATEGORIES.join(', ')}`),
    pattern: storedText().nullable().optional(),
  })
  .strict();

const guardrailViewSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    stage: z.enum(['input', 'output']),
    category: z.enum(CATEGORIES),
    pattern: z.string().nullable(),
    created_at: z.string(),
  })
  .meta({ id: 'Guardrail' });
const guardrailListSchema = z.object({ data: z.array(guardrailViewSchema) });
const deletedGuardrailSchema = guardrailViewSchema.extend({ deleted: z.literal(true) });

/** A rule as the API shows it (times in ISO 8601, like the keys API). */
function guardrailView(rule: Guardrail): z.output<typeof guardrailViewSchema> {
  return {
    id: rule.id,
    name: rule.name,
    stage: rule.stage,
    category: rule.category,
    pattern: rule.pattern,
    created_at: new Date(rule.createdAt).toISOString(),
  };
}

const notFound = (id: string) => new GatewayError('not_found', `No guardrail "${id}" on this account.`);

/**
 * The guardrails API: an account's rules that refuse requests (input stage, never charged) or
 * answers (output stage, charged) holding a kind of text. `regex` and `keyword` take a pattern,
 * run on RE2 (linear time); the others take none.
 */
export const guardrailsRoutes = [
  defineRoute({
    method: 'POST',
    path: '/v1/guardrails',
    operationId: 'createGuardrail',
    summary: 'Create a guardrail: a rule that refuses requests or answers holding a kind of text',
    tag: 'Guardrails',
    access: 'provisioning',
    body: newGuardrailBody,
    responses: { 201: { description: 'The created rule', schema: guardrailViewSchema } },
    async handle({ body, auth, deps }) {
      const problem = patternProblem(body.category, body.pattern);
      if (problem) throw new GatewayError('invalid_request', `pattern: ${problem}`);
      const rule = await deps.storage.createGuardrail({
        accountId: auth.account.id,
        name: body.name,
        stage: body.stage,
        category: body.category,
        pattern: body.pattern ?? null,
        now: deps.now(),
      });
      return deps.jsonResponse(guardrailView(rule), 201);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/guardrails',
    operationId: 'listGuardrails',
    summary: "List the account's guardrails, oldest first",
    tag: 'Guardrails',
    access: 'provisioning',
    responses: { 200: { description: 'The guardrails', schema: guardrailListSchema } },
    async handle({ auth, deps }) {
      const rules = await deps.storage.listGuardrails(auth.account.id);
      return deps.jsonResponse({ data: rules.map(guardrailView) });
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/v1/guardrails/{id}',
    operationId: 'deleteGuardrail',
    summary: 'Delete a guardrail: it applies to no further request',
    tag: 'Guardrails',
    access: 'provisioning',
    responses: { 200: { description: 'The deleted rule', schema: deletedGuardrailSchema } },
    async handle({ params, auth, deps }) {
      const id = params.id!;
      const accountId = auth.account.id;
      const rule = (await deps.storage.listGuardrails(accountId)).find((r) => r.id === id);
      if (!rule || !(await deps.storage.deleteGuardrail(accountId, id))) throw notFound(id);
      return deps.jsonResponse({ ...guardrailView(rule), deleted: true }, 200);
    },
  }),
];
