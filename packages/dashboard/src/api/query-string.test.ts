import { describe, expect, it } from 'vitest';
import { buildQuery } from './query-string.js';

describe('buildQuery', () => {
  it('buildQuery - leaves out empty, null and undefined values', () => {
    expect(buildQuery({ limit: 50, after: undefined, model: '', status: null, key_id: 'k_1' })).toBe(
      '?limit=50&key_id=k_1',
    );
  });

  it('buildQuery - gives an empty string when nothing is set', () => {
    expect(buildQuery({ a: '', b: undefined })).toBe('');
  });

  it('buildQuery - encodes reserved characters', () => {
    expect(buildQuery({ label: 'team=a&b', model: 'openai/gpt-4o' })).toBe(
      '?label=team%3Da%26b&model=openai%2Fgpt-4o',
    );
  });
});
