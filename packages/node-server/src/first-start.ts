import {
  type Account,
  type Catalogue,
  type CatalogueModel,
  type CatalogueProvider,
  createApiKey,
  type GatewayConfig,
  type Project,
  type Storage,
} from '@tollgate/core';
import { DASHBOARD_PATH } from './dashboard/dashboard-endpoint.js';
import { isLoopback } from './probe-local-providers.js';

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

/** One model as the banner lists it. */
export interface OverviewModel {
  id: string;
  type: CatalogueModel['type'];
}

/** Which models a fresh server can call, for the banner; see `modelsOverview`. */
export interface ModelsOverview {
  /**
   * Models that can answer now, grouped by the provider of their first usable endpoint, in
   * catalogue order: the demo's, a remote provider's whose key is set, a local server's that
   * answered the probe.
   */
  usable: { provider: CatalogueProvider; models: OverviewModel[] }[];
  /** Models with no usable endpoint, grouped by what they wait for: the key's variable name, else the provider id. */
  waiting: { needs: string; models: string[] }[];
  /** Models on a local server (loopback `base_url`) that did not answer the probe: routed once it runs. */
  notAnswering: { provider: CatalogueProvider; models: string[] }[];
  /**
   * The model the snippets call: one served by a remote provider whose key is set, else a `demo`
   * model (it always answers, offline), else a local one that answered; `null` when none can answer.
   */
  snippetModel: string | null;
}

/**
 * What the banner says about the catalogue. `providers` is the config's, for the key variables'
 * names; `answering` holds the loopback providers that answered `probeLocalProviders` (the others
 * are listed as not answering, since a call to them would fail now).
 */
export function modelsOverview(
  catalogue: Catalogue,
  providers: GatewayConfig['providers'],
  answering: ReadonlySet<string> = new Set(),
): ModelsOverview {
  const usable = new Map<string, ModelsOverview['usable'][number]>();
  const waiting = new Map<string, string[]>();
  const notAnswering = new Map<string, ModelsOverview['notAnswering'][number]>();
  let remote: string | null = null;
  let demo: string | null = null;
  let local: string | null = null;
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
    const loopback = provider.format !== 'demo' && isLoopback(provider.baseUrl);
    if (loopback && !answering.has(provider.id)) {
      const group = notAnswering.get(provider.id) ?? { provider, models: [] };
      group.models.push(model.id);
      notAnswering.set(provider.id, group);
      continue;
    }
    const group = usable.get(provider.id) ?? { provider, models: [] };
    group.models.push({ id: model.id, type: model.type });
    usable.set(provider.id, group);
    // The snippets call /v1/chat/completions: only a chat model will do.
    if (model.type !== 'chat') continue;
    if (provider.format === 'demo') demo ??= model.id;
    else if (loopback) local ??= model.id;
    else remote ??= model.id;
  }
  return {
    usable: [...usable.values()],
    waiting: [...waiting].map(([needs, models]) => ({ needs, models })),
    notAnswering: [...notAnswering.values()],
    snippetModel: remote ?? demo ?? local,
  };
}

/**
 * The once-only text printed after first start: both keys, the dashboard's URL (when it is built and
 * served), the models callable now by provider and type (then the local ones not answering, and
 * the key each other one waits for), a `curl` that calls a usable chat model, one for the balance,
 * and an OpenAI-SDK snippet.
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
    for (const group of models.usable) {
      lines.push(`  ${describeProvider(group.provider)}`);
      const types = [...new Set(group.models.map((m) => m.type))];
      const width = Math.max(...types.map((type) => type.length));
      for (const type of types) {
        const ids = group.models.filter((m) => m.type === type).map((m) => m.id);
        lines.push(`    ${type.padEnd(width)}   ${ids.join(', ')}`);
      }
    }
  }
  if (models.notAnswering.length > 0) {
    lines.push('Not answering now (a local server that is not running; start it, no restart needed):');
    for (const group of models.notAnswering) {
      lines.push(`  ${group.provider.id} (${group.provider.baseUrl})   ${group.models.join(', ')}`);
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
  if (isLoopback(provider.baseUrl)) return `${provider.id}: ${provider.baseUrl}, answering`;
  return `${provider.id}: key set`;
}
