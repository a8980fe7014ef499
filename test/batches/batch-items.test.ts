import { randomBytes } from 'node:crypto';
import type { RequestRecord } from '@tollgate/core';
import { expect, it } from 'vitest';
import { chatBody } from '../helpers/account-features.js';
import { type BatchGateway, chatBatch, describeOnEachBatchStorage } from '../helpers/batch-gateway.js';
import { embeddingsAnswer, type Json, openAIError, type UpstreamCall } from '../helpers/inference-wire.js';
import { openAiCompletion } from '../helpers/records-wire.js';
import type { Tenant } from '../helpers/tenant.js';

/*
 * Batch items as they run (product.md "Batches (`/v1/batches`)", "Batch result lines", "Batch items
 * and their ids"): each item is a full metered request of its own (own request id, record,
 * pre-flight, charge), a refused item fails with its code and is not charged, the results are one
 * NDJSON line per item in item order, and the database keeps no prompt or answer in clear.
 */

const REQUEST_ID = /^req_[0-9a-z]+$/;

/** The number in the last message of an item (`item <n>`), as the upstream received it. */
function itemNumber(call: UpstreamCall): number {
  const text = String(call.body.messages.at(-1).content);
  return Number(/item (\d+)/.exec(text)?.[1]);
}

/** The chat reply to item n: 10 + n prompt and 3 + n completion tokens on acme/chat (1 / 2 USD per M). */
const chatReply = (call: UpstreamCall) => {
  const n = itemNumber(call);
  return openAiCompletion({ text: `answer ${n}`, usage: { prompt: 10 + n, completion: 3 + n } });
};
const chatCost = (n: number) => 10 + n + 2 * (3 + n);

/** Item n of a chat batch. */
const chatItem = (n: number, extra: Record<string, unknown> = {}) =>
  chatBody({ messages: [{ role: 'user', content: `item ${n}` }], ...extra });

/** Creates the batch and waits until it is final; its id and final object. */
async function runBatch(gw: BatchGateway, tenant: Tenant, body: Json): Promise<Json> {
  const created = await gw.createBatch(tenant.inferenceKey, body);
  expect(created.response.status, JSON.stringify(created.body)).toBe(200);
  return gw.waitForBatch(created.body.id, tenant.inferenceKey);
}

/**
 * What an item answered 200 leaves behind: a line with `id === response.request_id`, the answer
 * with its `gateway` object under that id, a success record of that cost and one charge of it.
 */
async function expectChargedLine(gw: BatchGateway, tenant: Tenant, line: Json, costMicros: number) {
  expect(line.id).toMatch(REQUEST_ID);
  expect(line.error).toBeNull();
  expect(line.response).toMatchObject({ status_code: 200, request_id: line.id });
  expect(line.response.body.gateway).toMatchObject({ request_id: line.id, cost_micros: costMicros });
  const record = await gw.generation(line.id, tenant.inferenceKey);
  expect(record).toMatchObject({
    id: line.id,
    status: 'success',
    http_status: 200,
    cost_micros: costMicros,
    key_id: tenant.inferenceKeyId,
    error: null,
  });
  const charges = (await gw.charges(tenant.account.id)).filter((c) => c.requestId === line.id);
  expect(charges).toMatchObject([{ amountMicros: -costMicros }]);
  return record;
}

/** A failed item: its line carries the error envelope, its record the refusal, no charge. */
async function expectFailedLine(
  gw: BatchGateway,
  tenant: Tenant,
  line: Json,
  expected: { status: number; code: string; recordStatus: string },
) {
  expect(line.id).toMatch(REQUEST_ID);
  expect(line.error).toBeNull();
  expect(line.response).toEqual({
    status_code: expected.status,
    request_id: line.id,
    body: {
      error: {
        message: expect.any(String),
        type: expect.any(String),
        code: expected.code,
        request_id: line.id,
      },
    },
  });
  const record = await gw.generation(line.id, tenant.inferenceKey);
  expect(record).toMatchObject({
    id: line.id,
    status: expected.recordStatus,
    http_status: expected.status,
    error: { code: expected.code },
    cost_micros: 0,
  });
  expect((await gw.charges(tenant.account.id)).filter((c) => c.requestId === line.id)).toEqual([]);
}

describeOnEachBatchStorage('batch items, each a metered request', (gw) => {
  it('a chat batch completes: one line per item in item order, each with its own record and charge', async () => {
    const tenant = await gw().newTenant();
    gw().upstream.on('p1', chatReply, chatReply, chatReply);
    const customIds = ['zeta', 'alpha', 'mid'];
    const body = {
      endpoint: '/v1/chat/completions',
      requests: customIds.map((custom_id, n) => ({ custom_id, body: chatItem(n) })),
    };
    const done = await runBatch(gw(), tenant, body);
    expect(done).toMatchObject({
      status: 'completed',
      request_counts: { total: 3, completed: 3, failed: 0 },
    });
    expect(done.completed_at).toEqual(expect.any(Number));
    expect(done.completed_at).toBeGreaterThanOrEqual(done.created_at);
    expect(done.cancelled_at).toBeNull();

    const lines = await gw().results(done.id, tenant.inferenceKey);
    expect(lines.map((l) => l.custom_id)).toEqual(customIds);
    for (const [n, line] of lines.entries()) {
      expect(Object.keys(line).sort()).toEqual(['custom_id', 'error', 'id', 'response']);
      const record = await expectChargedLine(gw(), tenant, line, chatCost(n));
      expect(record).toMatchObject({ model: 'acme/chat', provider: 'p1' });
      expect(line.response.body).toMatchObject({
        object: 'chat.completion',
        choices: [{ message: { role: 'assistant', content: `answer ${n}` } }],
        usage: { prompt_tokens: 10 + n, completion_tokens: 3 + n },
        gateway: { model: 'acme/chat', provider: 'p1' },
      });
    }
    expect(new Set(lines.map((l) => l.id)).size).toBe(3);
    // Each item went upstream once, as its own request.
    expect(gw().upstream.calls.map(itemNumber).sort()).toEqual([0, 1, 2]);
    expect(gw().upstream.calls.every((c) => c.body.stream !== true)).toBe(true);
    const total = chatCost(0) + chatCost(1) + chatCost(2);
    expect(await gw().balance(tenant.account.id)).toBe(tenant.account.balanceMicros - total);
    expect(await gw().charges(tenant.account.id)).toHaveLength(3);
  });

  it('the results of a batch larger than a page of storage reads: every line once, in item order', async () => {
    const tenant = await gw().newTenant();
    const n = 205;
    const done = await runBatch(gw(), tenant, chatBatch(Array.from({ length: n }, (_, i) => chatItem(i))));
    expect(done.request_counts).toEqual({ total: n, completed: n, failed: 0 });
    const lines = await gw().results(done.id, tenant.inferenceKey);
    expect(lines.map((l) => l.custom_id)).toEqual(Array.from({ length: n }, (_, i) => `item-${i}`));
    expect(new Set(lines.map((l) => l.id)).size).toBe(n);
    expect(lines.every((l) => l.response.status_code === 200 && l.response.request_id === l.id)).toBe(true);
    const charges = await gw().charges(tenant.account.id);
    expect(new Set(charges.map((c) => c.requestId))).toEqual(new Set(lines.map((l) => l.id)));
  });

  it('an embeddings batch completes, each item charged for its own tokens', async () => {
    const tenant = await gw().newTenant();
    // acme/embed on p1: 0.02 USD per M tokens, so 50,000 × (n + 1) tokens cost 1,000 × (n + 1) micros.
    // Each input is long enough (400,000 characters: 100,000 tokens) for its hold to cover that.
    const reply = (call: UpstreamCall) => {
      const n = Number(/text (\d+)/.exec(String(call.body.input))?.[1]);
      return embeddingsAnswer({ inputs: 1, promptTokens: 50_000 * (n + 1) });
    };
    gw().upstream.on('p1', reply, reply);
    const done = await runBatch(gw(), tenant, {
      endpoint: '/v1/embeddings',
      requests: [0, 1].map((n) => ({
        custom_id: `e${n}`,
        body: { model: 'acme/embed', input: `text ${n} ${'w'.repeat(400_000)}` },
      })),
    });
    expect(done).toMatchObject({
      endpoint: '/v1/embeddings',
      status: 'completed',
      request_counts: { total: 2, completed: 2, failed: 0 },
    });
    const lines = await gw().results(done.id, tenant.inferenceKey);
    expect(lines.map((l) => l.custom_id)).toEqual(['e0', 'e1']);
    for (const [n, line] of lines.entries()) {
      const record = await expectChargedLine(gw(), tenant, line, 1_000 * (n + 1));
      expect(record).toMatchObject({ endpoint: 'embeddings', model: 'acme/embed' });
      expect(line.response.body).toMatchObject({ object: 'list', data: [{ object: 'embedding', index: 0 }] });
    }
    expect(gw().upstream.calls.map((c) => c.path)).toEqual(['/embeddings', '/embeddings']);
    expect(await gw().balance(tenant.account.id)).toBe(tenant.account.balanceMicros - 3_000);
  });

  it('items refused or failed at run time fail with their code and are not charged; the others are', async () => {
    const tenant = await gw().newTenant();
    // Item 3's upstream fails (one attempt per route, one route): 502 upstream_error.
    const reply = (call: UpstreamCall) => (itemNumber(call) === 3 ? openAIError(500) : chatReply(call));
    gw().upstream.on('p1', reply, reply, reply);
    const done = await runBatch(
      gw(),
      tenant,
      chatBatch([chatItem(0), chatItem(1, { model: 'acme/not-in-catalogue' }), chatItem(2), chatItem(3)]),
    );
    expect(done).toMatchObject({
      status: 'completed',
      request_counts: { total: 4, completed: 2, failed: 2 },
    });
    const lines = await gw().results(done.id, tenant.inferenceKey);
    expect(lines.map((l) => l.custom_id)).toEqual(['item-0', 'item-1', 'item-2', 'item-3']);
    await expectChargedLine(gw(), tenant, lines[0], chatCost(0));
    await expectFailedLine(gw(), tenant, lines[1], {
      status: 404,
      code: 'model_not_found',
      recordStatus: 'refused',
    });
    await expectChargedLine(gw(), tenant, lines[2], chatCost(2));
    await expectFailedLine(gw(), tenant, lines[3], {
      status: 502,
      code: 'upstream_error',
      recordStatus: 'error',
    });
    // The unknown model never went upstream; the failing one did, once.
    expect(gw().upstream.calls.map(itemNumber).sort()).toEqual([0, 2, 3]);
    expect(await gw().balance(tenant.account.id)).toBe(
      tenant.account.balanceMicros - chatCost(0) - chatCost(2),
    );
  });

  it('an account with too little credit: every item 402 insufficient_credit, nothing sent, nothing charged', async () => {
    // The pre-flight worst case of one item (a few prompt tokens + 100 output tokens at 2 USD per M)
    // is over 200 micros.
    const tenant = await gw().newTenant(100);
    const done = await runBatch(gw(), tenant, chatBatch([chatItem(0), chatItem(1)]));
    expect(done).toMatchObject({
      status: 'completed',
      request_counts: { total: 2, completed: 0, failed: 2 },
    });
    const lines = await gw().results(done.id, tenant.inferenceKey);
    for (const line of lines) {
      await expectFailedLine(gw(), tenant, line, {
        status: 402,
        code: 'insufficient_credit',
        recordStatus: 'refused',
      });
    }
    expect(gw().upstream.calls).toEqual([]);
    expect(await gw().balance(tenant.account.id)).toBe(100);
  });

  it('the key revoked before its items ran: they fail 401 key_revoked, never sent and never charged', async () => {
    const tenant = await gw().newTenant();
    const other = await gw().newTenant();
    const release = gw().holdUpstream();
    let blocker: string;
    let id: string;
    try {
      // Another account's items fill every slot of the worker (4), so this batch waits in the queue.
      blocker = (await gw().createBatch(other.inferenceKey, chatBatch([0, 1, 2, 3].map((n) => chatItem(n)))))
        .body.id;
      await gw().waitUntil(
        'the blocking items to reach the upstream',
        () => gw().upstream.calls.length === 4,
      );
      const created = await gw().createBatch(tenant.inferenceKey, chatBatch([chatItem(0), chatItem(1)]));
      expect(created.response.status).toBe(200);
      id = created.body.id;
      const revoke = await gw().gateway.fetch(
        new Request(`http://gateway.test/v1/keys/${tenant.inferenceKeyId}`, {
          method: 'DELETE',
          headers: { authorization: `Bearer ${tenant.provisioningKey}` },
        }),
      );
      expect(revoke.status, await revoke.clone().text()).toBe(200);
    } finally {
      release();
    }
    await gw().waitForBatch(blocker, other.inferenceKey);
    // The batch is read with the account's provisioning key (the inference key is revoked).
    const done = await gw().waitForBatch(id, tenant.provisioningKey);
    expect(done).toMatchObject({
      status: 'completed',
      request_counts: { total: 2, completed: 0, failed: 2 },
    });
    const lines = await gw().results(id, tenant.provisioningKey);
    for (const line of lines) {
      expect(line).toEqual({
        id: expect.stringMatching(REQUEST_ID),
        custom_id: line.custom_id,
        response: {
          status_code: 401,
          request_id: line.id,
          body: { error: expect.objectContaining({ code: 'key_revoked', request_id: line.id }) },
        },
        error: null,
      });
    }
    expect(gw().upstream.calls).toHaveLength(4);
    expect(await gw().charges(tenant.account.id)).toEqual([]);
    expect(await gw().balance(tenant.account.id)).toBe(tenant.account.balanceMicros);
  });

  it('the privacy canary: neither the prompt nor the answer of an item is stored in clear', async () => {
    const canary = `BATCHCANARY${randomBytes(10).toString('hex')}`;
    const tenant = await gw().newTenant();
    gw().upstream.on(
      'p1',
      openAiCompletion({ text: `The secret is ${canary}-answer.`, usage: { prompt: 10, completion: 3 } }),
    );
    const done = await runBatch(gw(), tenant, {
      endpoint: '/v1/chat/completions',
      requests: [
        {
          custom_id: 'private-item',
          body: chatBody({ messages: [{ role: 'user', content: `Remember ${canary}-prompt.` }] }),
        },
      ],
    });
    expect(done.request_counts).toEqual({ total: 1, completed: 1, failed: 0 });
    // The caller gets the answer back, and the upstream got the prompt...
    const [line] = await gw().results(done.id, tenant.inferenceKey);
    expect(line.response.body.choices[0].message.content).toContain(`${canary}-answer`);
    expect(JSON.stringify(gw().upstream.calls[0]!.body)).toContain(`${canary}-prompt`);
    // ...but the database holds neither (while it does hold the batch's items, in rows it can show).
    const dump = (await gw().opened.dump()).toString('latin1');
    expect(dump).toContain(done.id);
    expect(dump).toContain('private-item');
    expect(dump).not.toContain(canary);
  });
});

/** The record a request's pre-flight writes with its hold (status `in_progress`), or its finished form. */
function recordOf(
  tenant: Tenant,
  requestId: string,
  now: number,
  finished?: { costMicros: number },
): RequestRecord {
  return {
    id: requestId,
    accountId: tenant.account.id,
    keyId: tenant.inferenceKeyId,
    projectId: null,
    endpoint: 'chat.completions',
    requestedModel: null,
    model: 'acme/chat',
    provider: finished ? 'p1' : null,
    status: finished ? 'success' : 'in_progress',
    httpStatus: finished ? 200 : 0,
    errorCode: null,
    errorMessage: null,
    stream: false,
    promptTokens: finished ? 12 : 0,
    completionTokens: finished ? 5 : 0,
    cachedTokens: 0,
    costMicros: finished?.costMicros ?? 0,
    savedMicros: 0,
    overrunMicros: 0,
    waived: null,
    byok: false,
    cacheHit: false,
    preset: null,
    ttftMs: null,
    durationMs: finished ? 5 : null,
    finishReason: finished ? 'stop' : null,
    attempts: finished ? 1 : 0,
    routingFailures: [],
    attachments: {},
    guardrails: [],
    metadata: {},
    createdAt: now,
  };
}

describeOnEachBatchStorage('batch items whose worker died', (gw) => {
  /**
   * A batch of `n` chat items made by a process that takes no batch work, every item then claimed
   * by a worker (`wrk_dead`) that dies at once (its 200 ms leases are never renewed). No worker
   * of this suite runs meanwhile; `restart` then starts one (a sibling gateway, closed after the
   * test) and waits for the batch to be final.
   */
  async function batchOfDeadWorker(tenant: Tenant, n: number) {
    const idle = await gw().sibling({ concurrency: 0 });
    const created = await gw().createBatch(
      tenant.inferenceKey,
      chatBatch(Array.from({ length: n }, (_, i) => chatItem(i))),
      idle,
    );
    expect(created.response.status).toBe(200);
    const claimed = await gw().storage.claimBatchItems({
      owner: 'wrk_dead',
      now: gw().clock.now(),
      leaseMs: 200,
      limit: 10,
    });
    expect(claimed.map((item) => [item.batchId, item.index, item.attempts])).toEqual(
      Array.from({ length: n }, (_, i) => [created.body.id, i, 1]),
    );
    expect((await gw().getBatch(created.body.id, tenant.inferenceKey)).status).toBe('in_progress');
    const id = created.body.id as string;
    const restart = async () => {
      const runner = await gw().sibling({ leaseMs: 200 });
      try {
        runner.startBatches();
        return await gw().waitForBatch(id, tenant.inferenceKey);
      } finally {
        await runner.close();
      }
    };
    return { id, claimed, restart };
  }

  it('items claimed by a worker that died run again once its lease expires, each exactly once', async () => {
    const tenant = await gw().newTenant();
    gw().upstream.on('p1', chatReply, chatReply, chatReply);
    const { claimed, restart } = await batchOfDeadWorker(tenant, 3);
    const done = await restart();
    expect(done).toMatchObject({
      status: 'completed',
      request_counts: { total: 3, completed: 3, failed: 0 },
    });
    const lines = await gw().results(done.id, tenant.inferenceKey);
    // Each line keeps the request id the item was given when the batch was created.
    expect(lines.map((l) => l.id)).toEqual(claimed.map((item) => item.requestId));
    for (const [n, line] of lines.entries()) await expectChargedLine(gw(), tenant, line, chatCost(n));
    expect(gw().upstream.calls).toHaveLength(3);
    // The dead worker's late finish is refused: the item is no longer its own.
    expect(
      await gw().storage.finishBatchItem({
        batchId: done.id,
        index: 0,
        owner: 'wrk_dead',
        state: 'failed',
        sealedResult: null,
        now: gw().clock.now(),
      }),
    ).toBe(false);
    expect(await gw().getBatch(done.id, tenant.inferenceKey)).toEqual(done);
  });

  it('an item whose earlier run settled before its worker died is not run nor charged again', async () => {
    const tenant = await gw().newTenant();
    gw().upstream.on('p1', chatReply);
    const { id, claimed, restart } = await batchOfDeadWorker(tenant, 2);
    // The dead worker's run of item 0 was answered and settled (charged 22 micros) just before it died.
    const first = claimed[0]!;
    const now = gw().clock.now();
    await gw().storage.settleRequest({
      reservationId: null,
      record: recordOf(tenant, first.requestId, now, { costMicros: 22 }),
      charge: { amountMicros: 22, description: 'chat acme/chat', keyId: tenant.inferenceKeyId },
    });

    const done = await restart();
    expect(done.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
    const [kept, ran] = await gw().results(id, tenant.inferenceKey);
    // Its answer was never kept with the batch: the line says so and points at the record.
    expect(kept).toEqual({
      id: first.requestId,
      custom_id: 'item-0',
      response: { status_code: 200, request_id: first.requestId, body: null },
      error: { code: 'result_lost', message: expect.stringContaining(first.requestId) },
    });
    await expectChargedLine(gw(), tenant, ran, chatCost(1));
    expect(gw().upstream.calls.map(itemNumber)).toEqual([1]);
    expect(
      (await gw().charges(tenant.account.id)).filter((c) => c.requestId === first.requestId),
    ).toHaveLength(1);
  });

  // product.md: "an item whose process died is run again within that time after a restart"; the
  // likeliest moment to die is mid-request, after the pre-flight wrote the hold and the
  // `in_progress` record.
  it('an item whose worker died mid-request (hold and in_progress record written) is run again and charged once', async () => {
    const tenant = await gw().newTenant();
    gw().upstream.on('p1', chatReply, chatReply);
    const { id, claimed, restart } = await batchOfDeadWorker(tenant, 2);
    const first = claimed[0]!;
    const now = gw().clock.now();
    const held = await gw().storage.reserveCredit({
      accountId: tenant.account.id,
      keyId: tenant.inferenceKeyId,
      requestId: first.requestId,
      amountMicros: 500,
      now,
      ttlMs: 15 * 60_000,
      record: recordOf(tenant, first.requestId, now),
    });
    expect(held.ok).toBe(true);

    const done = await restart();
    const lines = await gw().results(id, tenant.inferenceKey);
    expect(lines[0].response, JSON.stringify(lines[0])).toMatchObject({ status_code: 200 });
    expect(done.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
    for (const [n, line] of lines.entries()) await expectChargedLine(gw(), tenant, line, chatCost(n));
    expect(gw().upstream.calls.map(itemNumber).sort()).toEqual([0, 1]);
  });
});
