import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant } from '../helpers/test-gateway.js';
import { ChaosUpstream } from './helpers/chaos-upstream.js';
import { chaosConfig, type ServeProcess, spawnServe, writeConfig } from './helpers/gateways.js';
import { canariesAbsent, type Violations } from './helpers/invariants.js';
import { sendChat, Timings, tallyBy } from './helpers/load.js';
import { dbKinds, openDb, type ReliabilityDb } from './helpers/reliability-db.js';
import { seedFor } from './helpers/seed.js';

/**
 * OAuth secrets never land in clear: client secrets, authorization codes, PKCE code_verifiers and
 * the access tokens minted (and the wrong secret and wrong verifier a client sent) are found neither
 * in the database (the SQLite file with its WAL and journal, byte for byte; every column of every
 * row on Postgres), nor in the stdout/stderr of a real `tollgate serve` at LOG_LEVEL=debug, after
 * both grants ran against it: authorization code + PKCE (the client secret in the form body, and
 * HTTP Basic), client credentials (Basic, body, JSON; client A's second call gets its first token
 * back), a replayed code (the key its first use minted then revoked), a wrong client secret and a
 * wrong verifier. Each is also looked for hex-encoded (a bytea column shows as hex).
 * Proof the canaries travelled (every flow answered as it should, the tokens called the provider)
 * and that the dumps hold real data (the client ids, the minted keys' ids and the codes' challenges are in
 * them).
 */

const REDIRECT = 'https://app.example/callback';

/** A canary a client makes: PKCE-valid characters, 43–128 of them. */
function canary(kind: string): string {
  return `CANARY${kind}${randomBytes(20).toString('hex')}`;
}

function challengeOf(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}

interface Outcome {
  name: string;
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: OAuth and gateway answers.
  body: any;
  text: string;
  headers: Headers;
}

for (const variant of dbKinds) {
  if (variant.skip) console.info(`[reliability] oauth on ${variant.kind} is skipped: ${variant.skip}`);
  describe.skipIf(Boolean(variant.skip))(
    `oauth: secrets, codes, verifiers and tokens never reach the database or the logs [${variant.kind}]${variant.skip ? ` (skipped: ${variant.skip})` : ''}`,
    () => {
      const timings = new Timings(`oauth [${variant.kind}]`);
      const sent = {
        verifiers: [canary('VERIFIERA'), canary('VERIFIERB'), canary('VERIFIERC')],
        wrongVerifier: canary('WRONGVERIFIER'),
        wrongSecret: canary('WRONGSECRET'),
      };
      /** What the server handed out (filled as the flows run). */
      const issued = { secrets: [] as string[], codes: [] as string[], tokens: [] as string[] };
      const clientIds: string[] = [];
      const keyIds: string[] = [];
      const outcomes: Outcome[] = [];
      /** Whether client A's second client-credentials call got its first token back (one key, not two). */
      let sameTokenAgain = true;
      let db: ReliabilityDb;
      let upstream: ChaosUpstream;
      let server: ServeProcess | undefined;
      let dir = '';
      let output = '';
      let dump: Buffer = Buffer.alloc(0);

      const canaries = () => [
        ...sent.verifiers,
        sent.wrongVerifier,
        sent.wrongSecret,
        ...issued.secrets,
        ...issued.codes,
        ...issued.tokens,
      ];
      /** Each canary as sent, and hex-encoded (how Postgres prints a bytea holding it). */
      const withEncodings = (list: string[]) => [...list, ...list.map((c) => Buffer.from(c).toString('hex'))];

      beforeAll(async () => {
        const seed = seedFor(`oauth [${variant.kind}]`);
        db = await openDb(variant.kind);
        upstream = await new ChaosUpstream({ seed, weights: { ok: 1 } }).start();
        dir = mkdtempSync(join(tmpdir(), 'tollgate-oauth-'));
        const config = writeConfig(dir, chaosConfig(upstream.url));
        const developer = await createTenant(db.storage, {
          creditMicros: 50_000_000,
          name: 'oauth developer',
        });
        const user = await createTenant(db.storage, { creditMicros: 50_000_000, name: 'oauth user' });
        server = await timings.time('start server', () =>
          spawnServe(db.location, config, { LOG_LEVEL: 'debug' }),
        );
        const url = server.url;

        const send = async (
          name: string,
          path: string,
          init: {
            key?: string;
            json?: unknown;
            form?: Record<string, string>;
            basic?: [string, string];
            method?: string;
          },
        ): Promise<Outcome> => {
          const headers: Record<string, string> = {};
          let body: string | undefined;
          if (init.key) headers.authorization = `Bearer ${init.key}`;
          if (init.basic) {
            headers.authorization = `Basic ${Buffer.from(`${init.basic[0]}:${init.basic[1]}`).toString('base64')}`;
          }
          if (init.json !== undefined) {
            headers['content-type'] = 'application/json';
            body = JSON.stringify(init.json);
          } else if (init.form) {
            headers['content-type'] = 'application/x-www-form-urlencoded';
            body = new URLSearchParams(init.form).toString();
          }
          const response = await fetch(`${url}${path}`, {
            method: init.method ?? (body === undefined ? 'GET' : 'POST'),
            headers,
            body,
          });
          const text = await response.text();
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch {}
          const outcome = { name, status: response.status, body: parsed, text, headers: response.headers };
          outcomes.push(outcome);
          return outcome;
        };
        const register = async (name: string) => {
          const o = await send(`register ${name}`, '/v1/oauth/clients', {
            key: developer.provisioningKey,
            json: { name, redirect_uris: [REDIRECT] },
          });
          if (typeof o.body?.client_secret === 'string') issued.secrets.push(o.body.client_secret);
          if (typeof o.body?.client_id === 'string') clientIds.push(o.body.client_id);
          return o.body as { client_id: string; client_secret: string };
        };
        const authorize = async (name: string, clientId: string, verifier: string) => {
          const o = await send(name, '/v1/oauth/authorize', {
            key: user.provisioningKey,
            json: {
              client_id: clientId,
              redirect_uri: REDIRECT,
              code_challenge: challengeOf(verifier),
              code_challenge_method: 'S256',
              state: `state-${name.replaceAll(' ', '-')}`,
              spend_limit_usd: 3,
            },
          });
          if (typeof o.body?.code === 'string') issued.codes.push(o.body.code);
          return o.body?.code as string;
        };
        const minted = (o: Outcome) => {
          const token = o.body?.access_token;
          if (typeof token === 'string' && !issued.tokens.includes(token)) issued.tokens.push(token);
          return token as string;
        };
        const chat = async (name: string, key: string) => {
          const o = await sendChat(url, key, {
            model: 'chaos/duo',
            max_tokens: 50,
            messages: [{ role: 'user', content: 'hello' }],
          });
          outcomes.push({ name, status: o.status ?? 0, body: o.body, text: o.text, headers: new Headers() });
        };

        await timings.time('oauth flows', async () => {
          await send('metadata', '/.well-known/oauth-authorization-server', {});
          const a = await register('app A');
          const b = await register('app B');
          await send('list clients', '/v1/oauth/clients', { key: developer.provisioningKey });

          // Authorization code, the client secret in the form body.
          const codeA = await authorize('authorize A', a.client_id, sent.verifiers[0]!);
          const formA = {
            grant_type: 'authorization_code',
            code: codeA,
            redirect_uri: REDIRECT,
            client_id: a.client_id,
            client_secret: a.client_secret,
            code_verifier: sent.verifiers[0]!,
          };
          const tokenA = minted(await send('code A', '/v1/oauth/token', { form: formA }));
          await chat('chat with code A token', tokenA);
          const info = await send('key info A', '/v1/key', { key: tokenA });
          if (typeof info.body?.data?.id === 'string') keyIds.push(info.body.data.id);
          // The same code again: refused, and the key it minted is revoked.
          await send('code A replayed', '/v1/oauth/token', { form: formA });
          await send('key info A after replay', '/v1/key', { key: tokenA });

          // Authorization code, confidential (HTTP Basic), JSON body.
          const codeB = await authorize('authorize B', b.client_id, sent.verifiers[1]!);
          const tokenB = minted(
            await send('code B', '/v1/oauth/token', {
              basic: [b.client_id, b.client_secret],
              json: {
                grant_type: 'authorization_code',
                code: codeB,
                redirect_uri: REDIRECT,
                code_verifier: sent.verifiers[1]!,
              },
            }),
          );
          const infoB = await send('key info B', '/v1/key', { key: tokenB });
          if (typeof infoB.body?.data?.id === 'string') keyIds.push(infoB.body.data.id);

          // A wrong verifier.
          const codeC = await authorize('authorize C', a.client_id, sent.verifiers[2]!);
          await send('code C wrong verifier', '/v1/oauth/token', {
            basic: [a.client_id, a.client_secret],
            form: {
              grant_type: 'authorization_code',
              code: codeC,
              redirect_uri: REDIRECT,
              code_verifier: sent.wrongVerifier,
            },
          });

          // Client credentials: Basic, body, JSON.
          const tokenBasic = minted(
            await send('client_credentials basic', '/v1/oauth/token', {
              basic: [a.client_id, a.client_secret],
              form: { grant_type: 'client_credentials' },
            }),
          );
          minted(
            await send('client_credentials post', '/v1/oauth/token', {
              form: {
                grant_type: 'client_credentials',
                client_id: b.client_id,
                client_secret: b.client_secret,
              },
            }),
          );
          const tokenJson = minted(
            await send('client_credentials json', '/v1/oauth/token', {
              json: {
                grant_type: 'client_credentials',
                client_id: a.client_id,
                client_secret: a.client_secret,
              },
            }),
          );
          if (tokenJson !== tokenBasic) sameTokenAgain = false;
          await chat('chat with client_credentials token', tokenBasic);
          const infoBasic = await send('key info basic', '/v1/key', { key: tokenBasic });
          if (typeof infoBasic.body?.data?.id === 'string') keyIds.push(infoBasic.body.data.id);

          // A wrong secret, in the header and in the body.
          await send('wrong secret basic', '/v1/oauth/token', {
            basic: [a.client_id, sent.wrongSecret],
            form: { grant_type: 'client_credentials' },
          });
          await send('wrong secret post', '/v1/oauth/token', {
            form: {
              grant_type: 'client_credentials',
              client_id: b.client_id,
              client_secret: sent.wrongSecret,
            },
          });
        });
        await timings.time('stop server', async () => {
          await server!.process.stop('SIGTERM');
        });
        output = server.output();
        dump = await db.dump();
        console.info(
          `[reliability] oauth [${variant.kind}] figures: ${outcomes.length} requests ` +
            `${JSON.stringify(tallyBy(outcomes, (o) => `${o.name}:${o.status}`))}; ` +
            `${issued.secrets.length} secrets, ${issued.codes.length} codes, ${issued.tokens.length} tokens issued; ` +
            `${upstream.calls.length} upstream calls, ${output.length} bytes of logs, ${dump.length} bytes of database`,
        );
      }, 120_000);

      afterAll(async () => {
        timings.print();
        await server?.process.stop('SIGKILL');
        await upstream?.stop();
        await db?.close();
        if (dir) rmSync(dir, { recursive: true, force: true });
      });

      it('every flow answered as it should', () => {
        const status = Object.fromEntries(outcomes.map((o) => [o.name, o.status]));
        expect(status).toEqual({
          metadata: 200,
          'register app A': 201,
          'register app B': 201,
          'list clients': 200,
          'authorize A': 200,
          'code A': 200,
          'chat with code A token': 200,
          'key info A': 200,
          'code A replayed': 400,
          'key info A after replay': 401,
          'authorize B': 200,
          'code B': 200,
          'key info B': 200,
          'authorize C': 200,
          'code C wrong verifier': 400,
          'client_credentials basic': 200,
          'client_credentials post': 200,
          'client_credentials json': 200,
          'chat with client_credentials token': 200,
          'key info basic': 200,
          'wrong secret basic': 401,
          'wrong secret post': 401,
        });
        const error = Object.fromEntries(
          outcomes
            .filter((o) => o.name.startsWith('code') || o.name.startsWith('wrong'))
            .map((o) => [o.name, o.body?.error]),
        );
        expect(error).toMatchObject({
          'code A replayed': 'invalid_grant',
          'code C wrong verifier': 'invalid_grant',
          'wrong secret basic': 'invalid_client',
          'wrong secret post': 'invalid_client',
        });
        expect(outcomes.find((o) => o.name === 'key info B')?.body?.data?.key_spend?.limit_usd).toBe(3);
      });

      it('the canaries travelled: the server issued 2 secrets, 3 codes and 4 tokens, and the tokens reached the provider', () => {
        const violations: Violations = [];
        if (issued.secrets.length !== 2)
          violations.push(`${issued.secrets.length} client secrets issued, not 2`);
        if (issued.codes.length !== 3) violations.push(`${issued.codes.length} codes issued, not 3`);
        if (issued.tokens.length !== 4) violations.push(`${issued.tokens.length} distinct tokens, not 4`);
        if (!sameTokenAgain) violations.push("client A's second client-credentials call got a new token");
        if (new Set(canaries()).size !== canaries().length) violations.push('two canaries are the same');
        if (canaries().some((c) => c.length < 20)) violations.push('a canary is too short to look for');
        if (upstream.calls.length < 2)
          violations.push(`the provider got ${upstream.calls.length} calls, not 2`);
        expect(violations).toEqual([]);
      });

      it('the checks look at real data: the database holds the client ids and the minted keys, the logs are not empty', () => {
        expect(dump.length).toBeGreaterThan(1_000);
        expect(clientIds).toHaveLength(2);
        expect(keyIds).toHaveLength(3);
        for (const id of [...clientIds, ...keyIds]) expect(dump.includes(id), id).toBe(true);
        // The codes' rows are read too: each stored challenge (public by design) is in the dump.
        for (const verifier of sent.verifiers)
          expect(dump.includes(challengeOf(verifier)), verifier).toBe(true);
        expect(output).toMatch(/listening/);
        expect(output.split('\n').length).toBeGreaterThan(outcomes.length / 2);
      });

      it('no secret, code, verifier or token in the database files', () => {
        expect(
          canariesAbsent(
            variant.kind === 'sqlite' ? 'SQLite file + WAL' : 'Postgres rows',
            dump,
            withEncodings(canaries()),
          ),
        ).toEqual([]);
      });

      it('no secret, code, verifier or token in the server logs (stdout + stderr at LOG_LEVEL=debug)', () => {
        expect(canariesAbsent('server output', output, withEncodings(canaries()))).toEqual([]);
      });
    },
  );
}
