import { connect } from 'node:net';
import type { GatewayLogger, RequestSummary } from '@tollgate/core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { chatConfig } from './helpers/chat-gateway.js';
import { type E2eGateway, startE2eGateway } from './helpers/start-e2e-gateway.js';
import { openSqlite } from './helpers/storage-variants.js';
import type { Tenant } from './helpers/tenant.js';

/**
 * A client that hangs up while uploading its body (issue hole 4): any key holder can do it at will,
 * so it must be routine — recorded as `client_closed`, logged at debug — never an "unexpected
 * failure" with a stack in the error log.
 */
describe('a client that hangs up during the body upload', () => {
  let gw: E2eGateway;
  let tenant: Tenant;
  const lines: { level: string; obj: object; msg?: string }[] = [];
  const finished: RequestSummary[] = [];
  const logger: GatewayLogger = {
    info: (obj, msg) => lines.push({ level: 'info', obj, msg }),
    warn: (obj, msg) => lines.push({ level: 'warn', obj, msg }),
    error: (obj, msg) => lines.push({ level: 'error', obj, msg }),
    debug: (obj, msg) => lines.push({ level: 'debug', obj, msg }),
  };

  beforeAll(async () => {
    gw = await startE2eGateway({
      config: chatConfig,
      open: openSqlite,
      logger,
      gateway: { observer: { requestFinished: (summary) => finished.push(summary) } },
    });
    tenant = await gw.newTenant();
  });
  afterAll(() => gw?.close());

  it('is recorded as client_closed (499), logged at debug only, and the server keeps answering', async () => {
    const { port } = new URL(gw.url);
    const head = [
      'POST /v1/chat/completions HTTP/1.1',
      `Host: 127.0.0.1:${port}`,
      `Authorization: Bearer ${tenant.inferenceKey}`,
      'Content-Type: application/json',
      'Content-Length: 5000',
      '',
      '',
    ].join('\r\n');
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.write(`${head}{"model":"acme/gpt","messages":[{"role":"user","content":"half`);
    // Let the gateway authenticate and start reading the body, then hang up mid-upload.
    await new Promise((resolve) => setTimeout(resolve, 200));
    socket.destroy();

    await vi.waitFor(() => expect(finished.some((s) => s.endpoint === 'chat.completions')).toBe(true), {
      timeout: 10_000,
      interval: 20,
    });
    const summary = finished.find((s) => s.endpoint === 'chat.completions')!;
    expect(summary).toMatchObject({ status: 499, outcome: 'client_closed' });
    const record = await gw.storage.getRequestRecord(tenant.account.id, summary.requestId);
    expect(record).toMatchObject({
      status: 'client_closed',
      httpStatus: 499,
      errorCode: 'client_closed',
      costMicros: 0,
    });
    expect(gw.mock.received).toHaveLength(0);

    expect(lines.filter((line) => line.level === 'error')).toEqual([]);
    expect(lines.some((line) => line.level === 'debug' && /client closed/.test(line.msg ?? ''))).toBe(true);

    const health = await fetch(`${gw.url}/healthz`);
    expect(health.status).toBe(200);
  });
});
