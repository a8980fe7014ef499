import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant } from '../helpers/test-gateway.js';
import { ChaosUpstream } from './helpers/chaos-upstream.js';
import {
  chaosConfig,
  type InProcessGateway,
  newKey,
  QuickClock,
  startInProcessGateway,
} from './helpers/gateways.js';
import {
  balanceMatchesLedger,
  chargesMatchRecords,
  exactly,
  noClaimLeftInFlight,
  noReservationLeft,
  nothingChargedForFailures,
  readLedger,
  type Violations,
  withinLimit,
} from './helpers/invariants.js';
import { type ChatOutcome, sendChat, Timings, tallyBy } from './helpers/load.js';
import { dbKinds, openDb, type ReliabilityDb } from './helpers/reliability-db.js';
import { seedFor } from './helpers/seed.js';

/**
 * Overspend: 50 concurrent requests against a limit that covers exactly 10 of them, once for each
 * limit (the balance, a key's lifetime cap, the account's monthly ceiling) and for each request
 * shape (one choice and an ASCII prompt; `n` = 4; `best_of` = 3; a CJK prompt). The provider holds
 * every admitted request until all 50 have been decided (so every hold is live at once), then
 * answers with usage that costs exactly the reserved worst case: `n` choices and
 * max(`n`, `best_of`) × max_tokens completion tokens, and one prompt token per non-ASCII character
 * plus ⌈ASCII characters / 4⌉. Exactly 10 are admitted, and no limit is exceeded by a single micro.
 */

const CONCURRENT = 50;
const COVERED = 10;
/** `chaos/exact`: max_output_tokens 100, prompt 1 USD / completion 2 USD per million tokens. */
const MAX_TOKENS = 100;
const PROMPT_PRICE = 1_000_000n;
const COMPLETION_PRICE = 2_000_000n;
/** About a token per character for real tokenizers; ⌈chars/4⌉ used to hold a quarter of it. */
const CJK_TEXT = '请用一句话介绍一下你自己，谢谢。'.repeat(8);

/** One request shape: the fields it adds to the body, and its prompt text. */
interface Shape {
  /** Marker prefix (no `-`). */
  id: string;
  label: string;
  fields: { n?: number; best_of?: number };
  text?: string;
}

const SHAPES: Shape[] = [
  { id: 'plain', label: 'one choice, ASCII prompt', fields: {} },
  { id: 'n4', label: 'n=4', fields: { n: 4 } },
  { id: 'bestof3', label: 'best_of=3', fields: { best_of: 3 } },
  { id: 'cjk', label: 'CJK prompt, a token per character', fields: {}, text: CJK_TEXT },
];

function messagesFor(marker: string, text = 'Tell me something short.') {
  return [{ role: 'user', content: `${marker}: ${text}` }];
}

/**
 * Prompt tokens as product.md estimates them, computed independently: ⌈ASCII characters / 4⌉ plus
 * one per non-ASCII UTF-16 unit of the serialised messages. The provider reports exactly this, so
 * a CJK prompt is billed at a token per character.
 */
function promptTokensOf(messages: unknown): number {
  const text = JSON.stringify(messages);
  let ascii = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) < 0x80) ascii++;
  return Math.ceil(ascii / 4) + (text.length - ascii);
}

/** How many completions the provider generates (and bills): the larger of `n` and `best_of`. */
function completionsBilled(body: { n?: unknown; best_of?: unknown }): number {
  const whole = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v >= 1 ? v : 1);
  return Math.max(whole(body.n), whole(body.best_of));
}

/** The pre-flight worst case, computed independently: the prompt estimate plus choices × max_tokens, rounded up once. */
function worstCaseMicros(messages: unknown, shape: Shape): number {
  const promptTokens = BigInt(promptTokensOf(messages));
  const completionTokens = BigInt(completionsBilled(shape.fields) * MAX_TOKENS);
  return Number((promptTokens * PROMPT_PRICE + completionTokens * COMPLETION_PRICE + 999_999n) / 1_000_000n);
}

for (const variant of dbKinds) {
  if (variant.skip) console.info(`[reliability] overspend on ${variant.kind} is skipped: ${variant.skip}`);
  describe.skipIf(Boolean(variant.skip))(
    `overspend: ${CONCURRENT} concurrent requests, limits that cover ${COVERED} [${variant.kind}]${variant.skip ? ` (skipped: ${variant.skip})` : ''}`,
    () => {
      const timings = new Timings(`overspend [${variant.kind}]`);
      let db: ReliabilityDb;
      let upstream: ChaosUpstream;
      let gw: InProcessGateway;

      beforeAll(async () => {
        const seed = seedFor(`overspend [${variant.kind}]`);
        db = await openDb(variant.kind);
        upstream = await new ChaosUpstream({
          seed,
          weights: { ok: 1 },
          // Usage that costs exactly the reserved worst case: the estimate's prompt tokens, and
          // max_tokens for every completion generated (`n` choices come back).
          content: (body) => ({
            text: 'x'.repeat(MAX_TOKENS * 4),
            usage: {
              prompt: promptTokensOf(body.messages),
              completion: completionsBilled(body) * MAX_TOKENS,
            },
          }),
        }).start();
        gw = await startInProcessGateway(db.storage, chaosConfig(upstream.url), {
          clock: new QuickClock(seed),
        });
      }, 60_000);

      afterAll(async () => {
        timings.print();
        await gw?.close();
        await upstream?.stop();
        await db?.close();
      });

      /**
       * Fires `CONCURRENT` requests of `shape` at once; waits (bounded) until every one is either
       * refused or held upstream; calls `whileHeld` (every admitted hold is live then); then lets
       * the provider answer. Returns every outcome.
       */
      async function burst(
        scenario: string,
        key: string,
        shape: Shape,
        whileHeld?: () => Promise<void>,
      ): Promise<ChatOutcome[]> {
        const markers = Array.from(
          { length: CONCURRENT },
          (_, i) => `${scenario}-${String(i).padStart(2, '0')}`,
        );
        const settled: ChatOutcome[] = [];
        const pending = markers.map((marker) =>
          sendChat(gw.url, key, {
            model: 'chaos/exact',
            max_tokens: MAX_TOKENS,
            ...shape.fields,
            messages: messagesFor(marker, shape.text),
            x_chaos: { id: marker, force: 'hold' },
          }).then((o) => {
            settled.push(o);
            return o;
          }),
        );
        const held = () => upstream.calls.filter((c) => c.marker?.startsWith(`${scenario}-`)).length;
        try {
          await upstream.waitUntil(
            () => settled.length + held() >= CONCURRENT,
            30_000,
            `${scenario}: all decided`,
          );
          await whileHeld?.();
        } finally {
          upstream.releaseAll();
        }
        return Promise.all(pending);
      }

      /**
       * The account-wide checks every burst ends with: charges match the records, the balance is
       * `startMicros` plus the ledger, no failed request was charged, and no reservation is left.
       */
      async function settledCleanly(
        accountId: string,
        startMicros: number,
        outcomes: ChatOutcome[],
      ): Promise<Violations> {
        return [
          ...(await chargesMatchRecords(db, accountId)),
          ...(await balanceMatchesLedger(db, accountId, startMicros)),
          ...(await nothingChargedForFailures(db, accountId, idsOfFailures(outcomes))),
          ...(await noReservationLeft(db, accountId, Date.now())),
        ];
      }

      /** Every admitted answer carries the `n` choices the provider generated, and shows the cost W. */
      function answersWhole(outcomes: ChatOutcome[], shape: Shape, W: number): Violations {
        const choices = shape.fields.n ?? 1;
        return outcomes
          .filter((o) => o.status === 200)
          .flatMap((o) => [
            ...exactly(`${o.requestId}: choices in the answer`, o.body?.choices?.length ?? 0, choices),
            ...exactly(`${o.requestId}: cost shown`, o.shownCostMicros ?? -1, W),
          ]);
      }

      function admitted(outcomes: ChatOutcome[]): number {
        return outcomes.filter((o) => o.status === 200).length;
      }

      function refusedWith(outcomes: ChatOutcome[], code: string): number {
        return outcomes.filter((o) => o.errorCode === code).length;
      }

      function summary(outcomes: ChatOutcome[]): string {
        return JSON.stringify(tallyBy(outcomes, (o) => `${o.status}${o.errorCode ? `:${o.errorCode}` : ''}`));
      }

      async function chargedTotal(accountId: string): Promise<number> {
        return -(await readLedger(db, accountId))
          .filter((e) => e.kind === 'charge')
          .reduce((s, e) => s + e.amountMicros, 0);
      }

      for (const shape of SHAPES) {
        it(`[${shape.label}] balance covering 10: exactly 10 admitted, the balance ends at exactly 0, never below`, async () => {
          await timings.time(`balance, ${shape.label}`, async () => {
            const W = worstCaseMicros(messagesFor(`${shape.id}_balance-00`, shape.text), shape);
            const tenant = await createTenant(db.storage, {
              creditMicros: COVERED * W,
              name: `balance ${shape.id}`,
            });
            const lowest: number[] = [];
            const noteBalance = async () => {
              lowest.push((await db.storage.getAccount(tenant.account.id))!.balanceMicros);
            };
            const outcomes = await burst(`${shape.id}_balance`, tenant.inferenceKey, shape, noteBalance);
            await noteBalance();
            const after = await burst(`${shape.id}_balance2`, tenant.inferenceKey, shape);
            await noteBalance();
            const account = (await db.storage.getAccount(tenant.account.id))!;
            const charged = await chargedTotal(tenant.account.id);
            console.info(
              `[reliability] overspend balance [${shape.label}]: W=${W} µ$, first burst ${summary(outcomes)}, second ${summary(after)}, charged ${charged} µ$ of ${COVERED * W}`,
            );
            const violations: Violations = [
              ...exactly('requests admitted against the balance', admitted(outcomes), COVERED),
              ...exactly(
                'refused insufficient_credit',
                refusedWith(outcomes, 'insufficient_credit'),
                CONCURRENT - COVERED,
              ),
              ...exactly('admitted once the balance was used up', admitted(after), 0),
              ...withinLimit('charges against the balance', charged, COVERED * W),
              ...lowest.flatMap((b) => (b < 0 ? [`balance went negative: ${b} µ$`] : [])),
              ...exactly('final balance', account.balanceMicros, 0),
              ...answersWhole(outcomes, shape, W),
              ...(await settledCleanly(tenant.account.id, COVERED * W, [...outcomes, ...after])),
            ];
            expect(violations).toEqual([]);
          });
        });

        it(`[${shape.label}] key cap covering 10 (plus W − 1 µ$): exactly 10 admitted, the key never spends past its cap`, async () => {
          await timings.time(`key cap, ${shape.label}`, async () => {
            const W = worstCaseMicros(messagesFor(`${shape.id}_keycap-00`, shape.text), shape);
            const cap = COVERED * W + (W - 1);
            const tenant = await createTenant(db.storage, {
              creditMicros: 100 * CONCURRENT * W,
              name: `key cap ${shape.id}`,
            });
            const capped = await newKey(db.storage, tenant.account.id, {
              name: 'capped',
              spendLimitMicros: cap,
            });
            const outcomes = await burst(`${shape.id}_keycap`, capped.secret, shape);
            const after = await burst(`${shape.id}_keycap2`, capped.secret, shape);
            const key = (await db.storage.getApiKey(tenant.account.id, capped.id))!;
            console.info(
              `[reliability] overspend key cap [${shape.label}]: W=${W} µ$ cap=${cap} µ$, first burst ${summary(outcomes)}, second ${summary(after)}, key spent ${key.spentMicros} µ$`,
            );
            const violations: Violations = [
              ...exactly('requests admitted against the key cap', admitted(outcomes), COVERED),
              ...exactly(
                'refused key_limit_exceeded',
                refusedWith(outcomes, 'key_limit_exceeded'),
                CONCURRENT - COVERED,
              ),
              ...exactly('admitted once the cap was used up', admitted(after), 0),
              ...withinLimit('key spend against its cap', key.spentMicros, cap),
              ...exactly('key spend', key.spentMicros, COVERED * W),
              ...answersWhole(outcomes, shape, W),
              ...(await settledCleanly(tenant.account.id, 100 * CONCURRENT * W, [...outcomes, ...after])),
            ];
            expect(violations).toEqual([]);
          });
        });

        it(`[${shape.label}] monthly ceiling covering 10: exactly 10 admitted, month-to-date spend never past the ceiling`, async () => {
          await timings.time(`monthly ceiling, ${shape.label}`, async () => {
            const W = worstCaseMicros(messagesFor(`${shape.id}_monthly-00`, shape.text), shape);
            const ceiling = COVERED * W;
            const tenant = await createTenant(db.storage, {
              creditMicros: 100 * CONCURRENT * W,
              monthlyLimitMicros: ceiling,
              name: `monthly ${shape.id}`,
            });
            const outcomes = await burst(`${shape.id}_monthly`, tenant.inferenceKey, shape);
            const after = await burst(`${shape.id}_monthly2`, tenant.inferenceKey, shape);
            const spent = await db.storage.getMonthToDateSpend(tenant.account.id, Date.now());
            console.info(
              `[reliability] overspend monthly [${shape.label}]: W=${W} µ$ ceiling=${ceiling} µ$, first burst ${summary(outcomes)}, second ${summary(after)}, month-to-date ${spent} µ$`,
            );
            const violations: Violations = [
              ...exactly('requests admitted against the monthly ceiling', admitted(outcomes), COVERED),
              ...exactly(
                'refused monthly_limit_exceeded',
                refusedWith(outcomes, 'monthly_limit_exceeded'),
                CONCURRENT - COVERED,
              ),
              ...exactly('admitted once the ceiling was reached', admitted(after), 0),
              ...withinLimit('month-to-date spend against the ceiling', spent, ceiling),
              ...exactly('month-to-date spend', spent, ceiling),
              ...answersWhole(outcomes, shape, W),
              ...(await settledCleanly(tenant.account.id, 100 * CONCURRENT * W, [...outcomes, ...after])),
              ...(await noClaimLeftInFlight(db, tenant.account.id)),
            ];
            expect(violations).toEqual([]);
          });
        });
      }

      // Before the fix, `{"max_tokens": 10, "n": 128}` was held as one completion and charged 128.
      it('n or best_of past 128 is refused 400 invalid_request before the provider, never charged; n=128 is held at 128 completions', async () => {
        await timings.time('n past 128', async () => {
          const one = SHAPES[0]!;
          const W = worstCaseMicros(messagesFor('choices_n128-00'), one);
          const credits = 1_000 * W;
          const tenant = await createTenant(db.storage, { creditMicros: credits, name: 'choices' });
          // A key whose cap covers 20 single-choice requests, not one of 128 choices.
          const capped = await newKey(db.storage, tenant.account.id, {
            name: 'capped',
            spendLimitMicros: 20 * W,
          });
          const cases: {
            marker: string;
            key: string;
            fields: Record<string, unknown>;
            code: string;
            status: number;
          }[] = [
            {
              marker: 'choices_n129-00',
              key: tenant.inferenceKey,
              fields: { n: 129 },
              code: 'invalid_request',
              status: 400,
            },
            {
              marker: 'choices_bestof129-00',
              key: tenant.inferenceKey,
              fields: { best_of: 129 },
              code: 'invalid_request',
              status: 400,
            },
            {
              marker: 'choices_n128-00',
              key: capped.secret,
              fields: { n: 128 },
              code: 'key_limit_exceeded',
              status: 402,
            },
          ];
          const violations: Violations = [];
          const outcomes: ChatOutcome[] = [];
          for (const c of cases) {
            const o = await sendChat(gw.url, c.key, {
              model: 'chaos/exact',
              max_tokens: MAX_TOKENS,
              ...c.fields,
              messages: messagesFor(c.marker),
              x_chaos: { id: c.marker },
            });
            outcomes.push(o);
            const record = o.requestId
              ? await db.storage.getRequestRecord(tenant.account.id, o.requestId)
              : null;
            console.info(
              `[reliability] overspend ${JSON.stringify(c.fields)}: ${o.status} ${o.errorCode}, record ${record?.status}/${record?.httpStatus}/${record?.errorCode}, cost ${record?.costMicros} µ$, upstream calls ${upstream.callsFor(c.marker)}`,
            );
            violations.push(
              ...exactly(`${JSON.stringify(c.fields)}: status`, o.status ?? 0, c.status),
              ...(o.errorCode === c.code
                ? []
                : [`${JSON.stringify(c.fields)}: code ${o.errorCode}, expected ${c.code}`]),
              ...exactly(`${JSON.stringify(c.fields)}: upstream calls`, upstream.callsFor(c.marker), 0),
              ...(record?.status === 'refused' && record.errorCode === c.code && record.costMicros === 0
                ? []
                : [
                    `${JSON.stringify(c.fields)}: refusal record ${JSON.stringify(record && { status: record.status, code: record.errorCode, cost: record.costMicros })}`,
                  ]),
            );
          }
          const account = (await db.storage.getAccount(tenant.account.id))!;
          const key = (await db.storage.getApiKey(tenant.account.id, capped.id))!;
          expect([
            ...violations,
            ...exactly('balance', account.balanceMicros, credits),
            ...exactly('capped key spend', key.spentMicros, 0),
            ...(await settledCleanly(tenant.account.id, credits, outcomes)),
          ]).toEqual([]);
        });
      });
    },
  );
}

function idsOfFailures(outcomes: ChatOutcome[]): string[] {
  return outcomes.flatMap((o) => (o.status !== null && o.status >= 400 && o.requestId ? [o.requestId] : []));
}
