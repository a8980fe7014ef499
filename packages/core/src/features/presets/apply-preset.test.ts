import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/gateway-error.js';
import { instructionsFirst } from '../../operations/responses/responses-route.js';
import { type AppliedPreset, applyPreset, presetNameOf } from './apply-preset.js';

const user = { role: 'user', content: 'hi' };
const ownSystem = { role: 'system', content: 'be terse' };

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).code).toBe('invalid_request');
    return (error as GatewayError).message;
  }
  throw new Error('expected a refusal');
}

describe('presetNameOf', () => {
  it.each<[string, Record<string, unknown>, string | null]>([
    ['no preset at all', { model: 'acme/fast', messages: [user] }, null],
    ['"@preset/<name>" as the model', { model: '@preset/support-bot' }, 'support-bot'],
    ['"preset" beside a model', { model: 'acme/fast', preset: 'support-bot' }, 'support-bot'],
    ['"preset" without a model', { preset: 'support-bot' }, 'support-bot'],
    ['both, naming the same preset', { model: '@preset/a', preset: 'a' }, 'a'],
    ['a model that merely mentions presets', { model: 'vendor/@preset/x' }, null],
    ['a model that is not a string', { model: 42 }, null],
  ])('%s', (_, body, expected) => {
    expect(presetNameOf(body)).toBe(expected);
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    [
      'both, naming different presets',
      { model: '@preset/a', preset: 'b' },
      /body\.preset.*two different presets/,
    ],
    ['a preset that is not a string', { model: 'acme/fast', preset: 7 }, /body\.preset/],
    ['an empty preset', { model: 'acme/fast', preset: '' }, /body\.preset/],
    ['"@preset/" without a name', { model: '@preset/' }, /body\.model/],
  ])('refuses %s with 400 invalid_request naming the field', (_, body, message) => {
    expect(refusal(() => presetNameOf(body))).toMatch(message);
  });
});

describe('applyPreset', () => {
  it.each<[string, Record<string, unknown>, Record<string, unknown>, AppliedPreset]>([
    [
      '"@preset/<name>" becomes the preset\'s model; the preset fills what the request leaves out',
      { model: 'acme/fast', temperature: 0.2, max_tokens: 100 },
      { model: '@preset/p', messages: [user] },
      {
        body: { model: 'acme/fast', temperature: 0.2, max_tokens: 100, messages: [user], preset: 'p' },
        cache: undefined,
      },
    ],
    [
      'the request wins for every key it gives, null included',
      { model: 'acme/fast', temperature: 0.2, max_tokens: 100, provider: { order: ['a'] } },
      { model: 'other/model', preset: 'p', messages: [user], temperature: null, provider: { sort: 'price' } },
      {
        body: {
          model: 'other/model',
          temperature: null,
          max_tokens: 100,
          provider: { sort: 'price' },
          messages: [user],
          preset: 'p',
        },
        cache: undefined,
      },
    ],
    [
      "the merge is shallow: a nested object of the request replaces the preset's whole",
      { provider: { order: ['a'], allow_fallbacks: false } },
      { model: 'm', preset: 'p', provider: { order: ['b'] } },
      { body: { model: 'm', provider: { order: ['b'] }, preset: 'p' }, cache: undefined },
    ],
    [
      '"preset" without a model takes the preset\'s model',
      { model: 'acme/fast' },
      { preset: 'p', messages: [user] },
      { body: { model: 'acme/fast', messages: [user], preset: 'p' }, cache: undefined },
    ],
    [
      "the preset's system message goes first, before the request's own system messages",
      { model: 'acme/fast', system: 'You are a support bot.' },
      { model: '@preset/p', messages: [ownSystem, user] },
      {
        body: {
          model: 'acme/fast',
          messages: [{ role: 'system', content: 'You are a support bot.' }, ownSystem, user],
          preset: 'p',
        },
        cache: undefined,
      },
    ],
    [
      "the preset's system is ignored for a body without messages (e.g. embeddings)",
      { model: 'acme/embed', system: 'ignored' },
      { model: '@preset/p', input: 'text' },
      { body: { model: 'acme/embed', input: 'text', preset: 'p' }, cache: undefined },
    ],
    [
      "the preset's cache is returned apart, never merged into the body",
      { model: 'acme/fast', cache: true },
      { model: '@preset/p', messages: [user] },
      { body: { model: 'acme/fast', messages: [user], preset: 'p' }, cache: true },
    ],
    [
      'cache: false is returned as false',
      { model: 'acme/fast', cache: false },
      { model: '@preset/p', messages: [user] },
      { body: { model: 'acme/fast', messages: [user], preset: 'p' }, cache: false },
    ],
    [
      'a preset without a model serves a request that gives its own',
      { temperature: 0 },
      { model: 'acme/fast', preset: 'p', messages: [user] },
      { body: { model: 'acme/fast', temperature: 0, messages: [user], preset: 'p' }, cache: undefined },
    ],
    [
      "the body's preset field is the preset's name",
      {},
      { model: 'acme/fast', preset: 'p' },
      { body: { model: 'acme/fast', preset: 'p' }, cache: undefined },
    ],
  ])('%s', (_, config, body, expected) => {
    expect(applyPreset(body, { name: 'p', config })).toEqual(expected);
  });

  it.each([
    [
      'no instructions of its own: the preset’s system is the instructions',
      { input: 'hi' },
      'You are a support bot.',
    ],
    [
      'instructions of its own: the preset’s system comes first',
      { input: 'hi', instructions: 'Be brief.' },
      'You are a support bot.\n\nBe brief.',
    ],
  ])('a Responses body (system in instructions): %s', (_, body, instructions) => {
    const applied = applyPreset(
      { model: '@preset/p', ...body },
      { name: 'p', config: { model: 'acme/fast', system: 'You are a support bot.' } },
      instructionsFirst,
    );
    expect(applied.body).toEqual({ model: 'acme/fast', input: 'hi', instructions, preset: 'p' });
  });

  it('changes neither the request body nor the preset', () => {
    const config = { model: 'acme/fast', system: 'S', cache: true, temperature: 1 };
    const body = { model: '@preset/p', messages: [user] };
    const before = structuredClone({ config, body });
    applyPreset(body, { name: 'p', config });
    expect({ config, body }).toEqual(before);
  });

  it('refuses "@preset/<name>" when the preset names no model, naming the preset', () => {
    const message = refusal(() =>
      applyPreset(
        { model: '@preset/no-model', messages: [user] },
        { name: 'no-model', config: { temperature: 1 } },
      ),
    );
    expect(message).toMatch(/body\.model/);
    expect(message).toContain('"no-model" names no model');
  });
});
