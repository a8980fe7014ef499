import { describe, expect, it } from 'vitest';
import { buildCatalogue } from './catalogue.js';
import { ConfigError, parseGatewayConfig } from './config-schema.js';

const valid = {
  providers: {
    anthropic: {
      format: 'anthropic',
      base_url: 'https://api.anthropic.com/v1',
      api_key_env: 'ANTHROPIC_API_KEY',
    },
    local: { format: 'openai', base_url: 'http://127.0.0.1:11434/v1/', api_key: 'unused' },
  },
  models: [
    {
      id: 'anthropic/claude-sonnet-4',
      max_output_tokens: 64000,
      capabilities: { tools: true },
      endpoints: [
        {
          provider: 'anthropic',
          upstream_model: 'claude-sonnet-4-20250514',
          pricing: { prompt: '3', completion: '15', cached_prompt: '0.30' },
        },
      ],
    },
    {
      id: 'local/llama',
      max_output_tokens: 4096,
      endpoints: [{ provider: 'local', upstream_model: 'llama3.2', pricing: { prompt: 0, completion: '0' } }],
    },
  ],
  billing: { top_up_fee_percent: '5' },
};

function issuesOf(input: unknown): { path: string; message: string }[] {
  try {
    parseGatewayConfig(input);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('parseGatewayConfig', () => {
  it('parses prices exactly into micros per million tokens and fills defaults', () => {
    const config = parseGatewayConfig(valid);
    expect(config.models[0]?.endpoints[0]?.pricing).toEqual({
      prompt: 3_000_000,
      completion: 15_000_000,
      cached_prompt: 300_000,
    });
    expect(config.defaults.rate_limit_rpm).toBe(600);
    expect(config.billing.top_up_fee_percent).toBe(5_000_000);
    expect(config.models[1]?.capabilities.tools).toBe(false);
  });

  it('names the JSON path of a price with more than six decimals', () => {
    const bad = structuredClone(valid);
    bad.models[0]!.endpoints[0]!.pricing.prompt = '0.0000001';
    expect(issuesOf(bad)).toEqual([
      {
        path: '$.models[0].endpoints[0].pricing.prompt',
        message: expect.stringMatching(/more than 6 decimals/),
      },
    ]);
  });

  it('refuses a negative price', () => {
    const bad = structuredClone(valid);
    bad.models[0]!.endpoints[0]!.pricing.completion = '-1';
    expect(issuesOf(bad)[0]?.path).toBe('$.models[0].endpoints[0].pricing.completion');
  });

  it('refuses an endpoint whose provider is not declared', () => {
    const bad = structuredClone(valid);
    bad.models[0]!.endpoints[0]!.provider = 'nope';
    expect(issuesOf(bad)[0]).toEqual({
      path: '$.models[0].endpoints[0].provider',
      message: expect.stringMatching(/unknown provider/),
    });
  });

  it('refuses unknown fields and bad formats', () => {
    const bad = structuredClone(valid) as Record<string, unknown> & typeof valid;
    (bad.providers.local as Record<string, unknown>).format = 'gemini';
    (bad as Record<string, unknown>).extra = 1;
    const paths = issuesOf(bad).map((i) => i.path);
    expect(paths).toContain('$.providers.local.format');
    expect(paths).toContain('$');
  });

  it('refuses duplicate model ids', () => {
    const bad = structuredClone(valid);
    bad.models.push(structuredClone(bad.models[1]!));
    expect(issuesOf(bad)).toEqual([{ path: '$.models[2].id', message: 'duplicate model id "local/llama"' }]);
  });

  it('ConfigError.message lists every path', () => {
    const bad = structuredClone(valid);
    bad.models[0]!.max_output_tokens = -1;
    expect(() => parseGatewayConfig(bad)).toThrow(/at \$\.models\[0\]\.max_output_tokens: /);
  });
});

describe('responses: true (a native Responses upstream)', () => {
  it('is taken on an openai-format provider and lands on the catalogue; refused on any other format', () => {
    const openai = { ...valid.providers.local, responses: true };
    const catalogue = buildCatalogue(
      parseGatewayConfig({ ...valid, providers: { ...valid.providers, local: openai } }),
    );
    expect(catalogue.providers.get('local')?.responses).toBe(true);
    expect(buildCatalogue(parseGatewayConfig(valid)).providers.get('local')?.responses).toBeUndefined();
    const anthropic = { ...valid.providers.anthropic, responses: true };
    expect(issuesOf({ ...valid, providers: { ...valid.providers, anthropic } })).toEqual([
      {
        path: '$.providers.anthropic.responses',
        message: expect.stringMatching(/only an openai-format provider/),
      },
    ]);
  });
});

describe('the metrics section', () => {
  it('is optional; enabled defaults to true; token is a non-empty string; nothing else is accepted', () => {
    expect(parseGatewayConfig(valid).metrics).toBeUndefined();
    expect(parseGatewayConfig({ ...valid, metrics: {} }).metrics).toEqual({ enabled: true });
    expect(parseGatewayConfig({ ...valid, metrics: { token: 's3cret', enabled: false } }).metrics).toEqual({
      enabled: false,
      token: 's3cret',
    });
    expect(issuesOf({ ...valid, metrics: { token: '' } }).map((i) => i.path)).toEqual(['$.metrics.token']);
    expect(issuesOf({ ...valid, metrics: { path: '/m' } }).map((i) => i.path)).toEqual(['$.metrics']);
  });
});

describe('the limits section', () => {
  it('defaults to 10 MB a request and 5 MB an attachment; takes positive MB figures, fractions included', () => {
    expect(parseGatewayConfig(valid).limits).toEqual({ max_request_mb: 10, max_attachment_mb: 5 });
    expect(parseGatewayConfig({ ...valid, limits: { max_request_mb: 2.5 } }).limits).toEqual({
      max_request_mb: 2.5,
      max_attachment_mb: 5,
    });
    expect(issuesOf({ ...valid, limits: { max_attachment_mb: 0 } }).map((i) => i.path)).toEqual([
      '$.limits.max_attachment_mb',
    ]);
    expect(issuesOf({ ...valid, limits: { max_mb: 1 } }).map((i) => i.path)).toEqual(['$.limits']);
  });
});

describe('buildCatalogue', () => {
  it('resolves keys from the given env only; a provider without a key makes its routes unusable', () => {
    const config = parseGatewayConfig(valid);
    const without = buildCatalogue(config, {});
    expect(without.model('anthropic/claude-sonnet-4')?.endpoints[0]?.usable).toBe(false);
    expect(without.model('local/llama')?.endpoints[0]?.usable).toBe(true);
    const withKey = buildCatalogue(config, { ANTHROPIC_API_KEY: 'sk-ant-test' });
    expect(withKey.model('anthropic/claude-sonnet-4')?.endpoints[0]?.usable).toBe(true);
    expect(withKey.providers.get('anthropic')?.apiKey).toBe('sk-ant-test');
  });

  it('trims a trailing slash of base_url and keeps endpoint order', () => {
    const catalogue = buildCatalogue(parseGatewayConfig(valid));
    expect(catalogue.providers.get('local')?.baseUrl).toBe('http://127.0.0.1:11434/v1');
    expect(catalogue.model('missing/model')).toBeUndefined();
  });
});
