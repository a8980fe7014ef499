import { readFileSync } from 'node:fs';
import { ERROR_CODES } from '@tollgate/core';
import { describe, expect, it } from 'vitest';

const PAGE = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');

/** The rows of the page's code table: code → [status, type]. */
function documentedCodes(): Map<string, [string, string]> {
  const rows = new Map<string, [string, string]>();
  for (const m of PAGE.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \| `([a-z_]+)` \|/gm)) {
    rows.set(m[1] as string, [m[2] as string, m[3] as string]);
  }
  return rows;
}

describe('docs/errors.md', () => {
  it('has a row for every error code, with its status and type', () => {
    const rows = documentedCodes();
    for (const [code, { status, type }] of Object.entries(ERROR_CODES)) {
      expect(rows.get(code), `docs/errors.md has no row for ${code}`).toEqual([String(status), type]);
    }
  });

  it('lists no code the gateway does not have', () => {
    const stale = [...documentedCodes().keys()].filter((code) => !(code in ERROR_CODES));
    expect(stale).toEqual([]);
  });
});
