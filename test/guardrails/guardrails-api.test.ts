import { expect, it } from 'vitest';
import {
  describeOnEachInferenceStorage,
  type InferenceGateway,
  type Json,
} from '../helpers/inference-wire.js';
import type { Tenant } from '../helpers/tenant.js';

/*
 * The guardrails API (product.md "Guardrails"): `POST /v1/guardrails` (provisioning key),
 * `GET /v1/guardrails`, `DELETE /v1/guardrails/{id}`; `pattern` required for regex/keyword and
 * refused for the others; a pattern RE2 cannot run is refused; another account's rule reads 404.
 */

const remove = (gw: InferenceGateway, id: string, key: string) =>
  gw.gateway.fetch(
    new Request(`http://gateway.test/v1/guardrails/${encodeURIComponent(id)}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${key}` },
    }),
  );

async function create(
  gw: InferenceGateway,
  tenant: Tenant,
  body: Json,
): Promise<{ status: number; body: Json }> {
  const response = await gw.post('/v1/guardrails', body, tenant.provisioningKey);
  return { status: response.status, body: await response.json() };
}

describeOnEachInferenceStorage('Guardrails API', (gw) => {
  it('creates, lists and deletes rules: 201 with the view, list oldest first, deleted once then 404', async () => {
    const tenant = await gw().newTenant();
    const card = await create(gw(), tenant, { name: 'no cards', stage: 'input', category: 'payment_card' });
    expect(card.status, JSON.stringify(card.body)).toBe(201);
    expect(card.body).toEqual({
      id: expect.stringMatching(/^grd_/),
      name: 'no cards',
      stage: 'input',
      category: 'payment_card',
      pattern: null,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    const word = await create(gw(), tenant, {
      name: 'codename',
      stage: 'output',
      category: 'keyword',
      pattern: 'Project Falcon',
    });
    expect(word.status).toBe(201);
    expect(word.body.pattern).toBe('Project Falcon');

    const list = await gw().get('/v1/guardrails', tenant.provisioningKey);
    expect(list.status).toBe(200);
    expect(((await list.json()) as Json).data).toEqual([card.body, word.body]);

    const deleted = await remove(gw(), card.body.id, tenant.provisioningKey);
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toEqual({ ...card.body, deleted: true });
    expect((await remove(gw(), card.body.id, tenant.provisioningKey)).status).toBe(404);
    const after = (await (await gw().get('/v1/guardrails', tenant.provisioningKey)).json()) as Json;
    expect(after.data).toEqual([word.body]);
  });

  it.each([
    [{ name: 'x', stage: 'input', category: 'regex' }, 'needs a pattern'],
    [{ name: 'x', stage: 'input', category: 'keyword', pattern: '' }, 'needs a pattern'],
    [{ name: 'x', stage: 'input', category: 'email', pattern: 'a' }, 'takes no pattern'],
    [{ name: 'x', stage: 'input', category: 'regex', pattern: '(a)\\1' }, 'RE2'],
    [{ name: 'x', stage: 'input', category: 'regex', pattern: '(?<=a)b' }, 'RE2'],
    [{ name: 'x', stage: 'both', category: 'email' }, 'stage'],
    [{ name: 'x', stage: 'input', category: 'ssn' }, 'category'],
    [{ name: '', stage: 'input', category: 'email' }, 'name'],
    [{ name: 'x'.repeat(101), stage: 'input', category: 'email' }, 'name'],
  ])('refuses %j with 400 invalid_request (%s)', async (body, mentions) => {
    const tenant = await gw().newTenant();
    const { status, body: answer } = await create(gw(), tenant, body);
    expect(status, JSON.stringify(answer)).toBe(400);
    expect(answer.error.code).toBe('invalid_request');
    expect(answer.error.message).toContain(mentions);
    expect(await gw().storage.listGuardrails(tenant.account.id)).toEqual([]);
  });

  it("another account's rule is 404 on delete and not listed; an inference key gets 403", async () => {
    const owner = await gw().newTenant();
    const other = await gw().newTenant();
    const { body: rule } = await create(gw(), owner, { name: 'mail', stage: 'output', category: 'email' });
    const response = await remove(gw(), rule.id, other.provisioningKey);
    expect(response.status).toBe(404);
    expect(((await response.json()) as Json).error.code).toBe('not_found');
    expect(((await (await gw().get('/v1/guardrails', other.provisioningKey)).json()) as Json).data).toEqual(
      [],
    );
    expect(await gw().storage.listGuardrails(owner.account.id)).toHaveLength(1);
    const wrongScope = await gw().post(
      '/v1/guardrails',
      { name: 'x', stage: 'input', category: 'email' },
      owner.inferenceKey,
    );
    expect(wrongScope.status).toBe(403);
  });
});
