import { type Account, createApiKey, type Project, type Storage } from '@tollgate/core';

/** Demo credit given to the default account on first start: $5, as a gift (no top-up fee). */
export const DEMO_CREDIT_MICROS = 5_000_000;

export interface FirstStartResult {
  account: Account;
  project: Project;
  /** Full secrets: shown once by `formatFirstStartBanner`, never stored or logged. */
  provisioningKey: string;
  inferenceKey: string;
}

/**
 * On an empty database (no account at all), creates the default account with $5 of demo credit (one
 * `credit` ledger line, no fee), a default project, a provisioning key and an inference key. Returns
 * `null` when any account exists, so a restart provisions nothing. Two servers starting at the same
 * instant on one empty database could both provision; the second set of keys is merely redundant.
 */
export async function provisionFirstStart(storage: Storage): Promise<FirstStartResult | null> {
  if ((await storage.countAccounts()) > 0) return null;
  const account = await storage.createAccount({ name: 'Default account' });
  await storage.appendLedgerEntries(account.id, [
    {
      amountMicros: DEMO_CREDIT_MICROS,
      kind: 'credit',
      description: 'Demo credit on first start (a gift, no fee)',
    },
  ]);
  const project = await storage.createProject({ accountId: account.id, name: 'Default project' });
  const provisioning = await createApiKey(storage, {
    accountId: account.id,
    name: 'Default provisioning key',
    scope: 'provisioning',
    env: 'live',
  });
  const inference = await createApiKey(storage, {
    accountId: account.id,
    name: 'Default inference key',
    scope: 'inference',
    env: 'live',
  });
  return {
    account: (await storage.getAccount(account.id)) ?? account,
    project,
    provisioningKey: provisioning.secret,
    inferenceKey: inference.secret,
  };
}

/** The once-only text printed after first start: both keys, a `curl` and an OpenAI-SDK snippet. */
export function formatFirstStartBanner(result: FirstStartResult, baseUrl: string): string {
  const origin = baseUrl.replace(/\/+$/, '');
  return [
    '',
    'Tollgate first start: created "Default account" with $5.00 of demo credit and a default project.',
    'These keys are shown ONCE. Store them now; only their hashes are kept.',
    '',
    `  Provisioning key (manage keys):  ${result.provisioningKey}`,
    `  Inference key (call models):     ${result.inferenceKey}`,
    `  Account: ${result.account.id}   Project: ${result.project.id}`,
    '',
    'Try it:',
    '',
    `  curl ${origin}/v1/key -H "Authorization: Bearer ${result.inferenceKey}"`,
    '',
    'OpenAI SDK:',
    '',
    "  import OpenAI from 'openai';",
    `  const client = new OpenAI({ baseURL: '${origin}/v1', apiKey: '${result.inferenceKey}' });`,
    '  const completion = await client.chat.completions.create({',
    "    model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Hello!' }] });",
    '  console.log(completion.choices[0].message.content);',
    '',
  ].join('\n');
}
