import {
  type Account,
  type Catalogue,
  type CatalogueProvider,
  createApiKey,
  type GatewayConfig,
  type Project,
  type Storage,
} from '@tollgate/core';
import { DASHBOARD_PATH } from './dashboard/dashboard-endpoint.js';

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

/** Which models a fresh server can call, for the banner; see `modelsOverview`. */
export interface ModelsOverview {
  /** Models with a usable endpoint, grouped by the provider of the first one, in catalogue order. */
  usable: { provider: CatalogueProvider; models: string[] }[];
  /** Models with none, grouped by what they wait for: the key's variable name, else the provider id. */
  waiting: { needs: string; models: string[] }[];
  /**
   * The model the snippets call: one served by a remote provider whose key is set, else a `demo`
   * model (it always answers, offline), else any usable one (a local server that may not be
   * running); `null` when no model is usable.
   */
  snippetModel: string | null;
}

/** What the banner says about the catalogue; `providers` is the config's, for the key variables' names. */
export function modelsOverview(catalogue: Catalogue, providers: GatewayConfig['providers']): ModelsOverview {
  const usable = new Map<string, { provider: CatalogueProvider; models: string[] }>();
  const waiting = new Map<string, string[]>();
  let remote: string | null = null;
  let demo: string | null = null;
  let any: string | null = null;
  for (const model of catalogue.models) {
    const endpoint = model.endpoints.find((e) => e.usable);
    if (!endpoint) {
      const config = providers[model.endpoints[0]!.provider.id];
      const needs =
        (config && 'api_key_env' in config && config.api_key_env) || model.endpoints[0]!.provider.id;
      waiting.set(needs, [...(waiting.get(needs) ?? []), model.id]);
      continue;
    }
    const { provider } = endpoint;
    const group = usable.get(provider.id) ?? { provider, models: [] };
    group.models.push(model.id);
    usable.set(provider.id, group);
    // The snippets call /v1/chat/completions: only a chat model will do.
    if (model.type !== 'chat') continue;
    any ??= model.id;
    if (provider.format === 'demo') demo ??= model.id;
    else if (!isLoopback(provider.baseUrl)) remote ??= model.id;
  }
  return {
    usable: [...usable.values()],
    waiting: [...waiting].map(([needs, models]) => ({ needs, models })),
    snippetModel: remote ?? demo ?? any,
  };
}

/**
 * The once-only text printed after first start: both keys, the dashboard's URL (when it is built and
 * served), the models callable now (and the key each other one waits for), a `curl` that calls a
 * usable model, one for the balance, and an OpenAI-SDK snippet.
 */
export function formatFirstStartBanner(
  result: FirstStartResult,
  baseUrl: string,
  models: ModelsOverview,
  options: { dashboard?: boolean } = {},
): string {
  const origin = baseUrl.replace(/\/+$/, '');
  const key = result.inferenceKey;
  const model = models.snippetModel;
  const lines = [
    '',
    'Tollgate first start: created "Default account" with $5.00 of demo credit and a default project.',
    'These keys are shown ONCE. Store them now; only their hashes are kept.',
    '',
    `  Provisioning key (manage keys):  ${result.provisioningKey}`,
    `  Inference key (call models):     ${key}`,
    `  Account: ${result.account.id}   Project: ${result.project.id}`,
    '',
  ];
  if (options.dashboard) {
    lines.push(`Dashboard: ${origin}${DASHBOARD_PATH}/  (sign in with the provisioning key)`, '');
  }
  if (models.usable.length === 0) {
    lines.push('No model can be called yet: set a provider key and restart.');
  } else {
    lines.push('Models you can call now:');
    const width = Math.max(...models.usable.map((g) => g.models.join(', ').length));
    for (const group of models.usable) {
      lines.push(`  ${group.models.join(', ').padEnd(width)}   (${describeProvider(group.provider)})`);
    }
  }
  if (models.waiting.length > 0) {
    lines.push('Waiting for a provider key (set it and restart):');
    const width = Math.max(...models.waiting.map((w) => w.needs.length));
    for (const group of models.waiting) {
      lines.push(`  ${group.needs.padEnd(width)}   ${group.models.join(', ')}`);
    }
  }
  lines.push('');
  if (model) {
    const body = JSON.stringify({ model, messages: [{ role: 'user', content: 'Hello!' }] });
    lines.push(
      `Try it (${model}; the answer comes with its cost in "gateway", charged to the account):`,
      '',
      `  curl ${origin}/v1/chat/completions \\`,
      `    -H "Authorization: Bearer ${key}" \\`,
      '    -H "Content-Type: application/json" \\',
      `    -d '${body}'`,
      '',
    );
  }
  lines.push(
    'Balance and spend of the key:',
    '',
    `  curl ${origin}/v1/key -H "Authorization: Bearer ${key}"`,
    '',
    'OpenAI SDK:',
    '',
    "  import OpenAI from 'openai';",
    `  const client = new OpenAI({ baseURL: '${origin}/v1', apiKey: '${key}' });`,
    '  const completion = await client.chat.completions.create({',
    `    model: '${model ?? catalogueFallback(models)}', messages: [{ role: 'user', content: 'Hello!' }] });`,
    '  console.log(completion.choices[0].message.content);',
    '',
  );
  return lines.join('\n');
}

function catalogueFallback(models: ModelsOverview): string {
  return models.waiting[0]?.models[0] ?? 'vendor/model';
}

function describeProvider(provider: CatalogueProvider): string {
  if (provider.format === 'demo') {
    return `${provider.id}: offline demo, answers in-process, metered like a real provider`;
  }
  if (isLoopback(provider.baseUrl)) return `${provider.id}: ${provider.baseUrl}, if it is running`;
  return `${provider.id}: key set`;
}

/** A provider on this machine (such as a local Ollama): usable by config, but maybe not running. */
function isLoopback(baseUrl: string): boolean {
  try {
    const host = new URL(baseUrl).hostname;
    return host === 'localhost' || host === '[::1]' || host.startsWith('127.');
  } catch {
    return false;
  }
}
