import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseGatewayConfig } from '@tollgate/core';
import { describe, expect, it } from 'vitest';
import { ConfigFileError, EXAMPLE_CONFIG_PATH, loadConfigFile } from './config-file.js';

const tempDir = () => mkdtempSync(join(tmpdir(), 'tollgate-config-'));
const example = () => JSON.parse(readFileSync(EXAMPLE_CONFIG_PATH, 'utf8'));

function loadError(options: Parameters<typeof loadConfigFile>[0]): ConfigFileError {
  try {
    loadConfigFile(options);
  } catch (error) {
    if (error instanceof ConfigFileError) return error;
    throw error;
  }
  throw new Error('expected a ConfigFileError');
}

describe('config file', () => {
  it('the bundled example config passes parseGatewayConfig, with exact micro prices', () => {
    const config = parseGatewayConfig(example());
    expect(config.defaults.rate_limit_rpm).toBe(600);
    expect(config.billing.top_up_fee_percent).toBe(5_000_000);
    const mini = config.models.find((m) => m.id === 'openai/gpt-4o-mini');
    expect(mini?.endpoints[0]?.pricing).toEqual({
      prompt: 150_000,
      completion: 600_000,
      cached_prompt: 75_000,
    });
    const free = config.models.find((m) => m.endpoints.every((e) => e.provider === 'local'));
    expect(free?.endpoints[0]?.pricing).toMatchObject({ prompt: 0, completion: 0 });
  });

  it('falls back to the example config when ./tollgate.config.json does not exist', () => {
    const loaded = loadConfigFile({ cwd: tempDir(), env: { OPENAI_API_KEY: 'sk-test' } });
    expect(loaded.source).toBe('example');
    expect(loaded.path).toBe(EXAMPLE_CONFIG_PATH);
    expect(loaded.catalogue.model('openai/gpt-4o-mini')?.endpoints[0]?.usable).toBe(true);
    expect(loaded.catalogue.model('anthropic/claude-sonnet-4')?.endpoints[0]?.usable).toBe(false);
    expect(loaded.catalogue.model('local/llama3.2')?.endpoints[0]?.usable).toBe(true);
  });

  it('prefers --config, then TOLLGATE_CONFIG, then ./tollgate.config.json', () => {
    const dir = tempDir();
    const write = (name: string, rpm: number) =>
      writeFileSync(join(dir, name), JSON.stringify({ ...example(), defaults: { rate_limit_rpm: rpm } }));
    write('tollgate.config.json', 1);
    write('env.json', 2);
    write('flag.json', 3);
    const rpm = (options: Parameters<typeof loadConfigFile>[0]) =>
      loadConfigFile(options).config.defaults.rate_limit_rpm;
    expect(rpm({ cwd: dir, env: {} })).toBe(1);
    expect(rpm({ cwd: dir, env: { TOLLGATE_CONFIG: 'env.json' } })).toBe(2);
    expect(rpm({ cwd: dir, env: { TOLLGATE_CONFIG: 'env.json' }, path: 'flag.json' })).toBe(3);
  });

  it('an invalid file names the file, the JSON path and the problem', () => {
    const dir = tempDir();
    const bad = example();
    bad.models[0].endpoints[0].pricing.prompt = '0.1234567';
    writeFileSync(join(dir, 'bad.json'), JSON.stringify(bad));
    const error = loadError({ cwd: dir, path: 'bad.json' });
    expect(error.message).toContain(join(dir, 'bad.json'));
    expect(error.message).toContain('$.models[0].endpoints[0].pricing.prompt');
    expect(error.message).toContain('more than 6 decimals');
  });

  it('a file that is not JSON, or missing, is refused with its name', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'broken.json'), '{ "providers": ');
    expect(loadError({ cwd: dir, path: 'broken.json' }).message).toMatch(/broken\.json: not valid JSON/);
    expect(loadError({ cwd: dir, path: 'nope.json' }).message).toMatch(/nope\.json: file not found/);
    expect(loadError({ cwd: dir, env: { TOLLGATE_CONFIG: 'gone.json' } }).message).toMatch(/gone\.json/);
  });

  it('takes the OTLP endpoint from OTEL_EXPORTER_OTLP_ENDPOINT when the file has none', () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(loadConfigFile({ cwd: tempDir(), env }).config.otlp).toEqual({
      endpoint: 'http://collector:4318',
      timeout_ms: 1000,
    });
    const dir = tempDir();
    writeFileSync(
      join(dir, 'c.json'),
      JSON.stringify({ ...example(), otlp: { endpoint: 'http://file:4318' } }),
    );
    expect(loadConfigFile({ cwd: dir, path: 'c.json', env }).config.otlp?.endpoint).toBe('http://file:4318');
  });
});
