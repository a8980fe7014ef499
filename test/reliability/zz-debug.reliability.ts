import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'vitest';
import { createTenant } from '../helpers/test-gateway.js';
import { ChaosUpstream } from './helpers/chaos-upstream.js';
import { chaosConfig, spawnServe, writeConfig } from './helpers/gateways.js';
import { sendChat } from './helpers/load.js';
import { openDb } from './helpers/reliability-db.js';

it('hang-up loop', async () => {
  const db = await openDb('sqlite');
  const upstream = await new ChaosUpstream({ seed: 1, weights: { ok: 1 }, content: () => ({ text: 'Echo CANARYCOMPLETION0000: you said lots of things here and there', toolArgs: '{"q":"x"}', usage: { prompt: 120, completion: 40 } }) }).start();
  const dir = mkdtempSync(join(tmpdir(), 'dbg-'));
  const t = await createTenant(db.storage, { creditMicros: 50_000_000 });
  const server = await spawnServe(db.location, writeConfig(dir, chaosConfig(upstream.url)), { LOG_LEVEL: 'debug' });
  for (let i = 0; i < 60; i++) {
    const t0 = Date.now(); console.info('ITER', i);
    const o = await sendChat(server.url, t.inferenceKey, { model: i % 2 ? 'chaos/solo' : 'chaos/duo', stream: true, messages: [{ role: 'user', content: 'hi' }], x_chaos: { id: `h${i}`, force: i % 3 === 0 ? 'break' : 'ok', breakAfter: 4 } }, { abortAfterFirstChunk: i % 3 !== 0, timeoutMs: 10_000 });
    const ms = Date.now() - t0;
    if (ms > 1000 || o.kind === 'transport') console.info('SLOW', i, ms, o.kind, o.status, o.transportError);
  }
  console.info('STOPPING'); await server.process.stop('SIGTERM'); console.info('STOPPED');
  console.info(server.output().slice(-3000));
  await upstream.stop();
  await db.close();
}, 200_000);
