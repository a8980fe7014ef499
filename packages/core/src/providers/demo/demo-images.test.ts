import { crc32, inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { DEMO_IMAGE_PIXELS, demoImage } from './demo-images.js';
import { createDemoProvider } from './demo-provider.js';
import { demoCall, demoTarget } from './demo-target.test-support.js';

const NOW = Date.UTC(2026, 0, 2, 3, 4, 5);
const demo = createDemoProvider({ now: () => NOW });
const target = demoTarget('image-small');
const PROMPT = 'a lighthouse at dusk, watercolour';

/** The chunks of a PNG, each checked against its CRC-32 (node's zlib, not the encoder's). */
function pngChunks(bytes: Buffer): { type: string; data: Buffer }[] {
  expect([...bytes.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const chunks: { type: string; data: Buffer }[] = [];
  for (let at = 8; at < bytes.length; ) {
    const length = bytes.readUInt32BE(at);
    const type = bytes.toString('latin1', at + 4, at + 8);
    const data = bytes.subarray(at + 8, at + 8 + length);
    expect(bytes.readUInt32BE(at + 8 + length), `CRC of ${type}`).toBe(
      crc32(bytes.subarray(at + 4, at + 8 + length)),
    );
    chunks.push({ type, data });
    at += 12 + length;
  }
  return chunks;
}

describe('demo images (through the OpenAI adapter, in-process)', () => {
  it('a valid 64 × 64 RGB PNG: signature, IHDR, IDAT that inflates to every scanline, IEND', async () => {
    const chunks = pngChunks(Buffer.from(await demoImage(PROMPT, 0)));
    expect(chunks.map((c) => c.type)).toEqual(['IHDR', 'IDAT', 'IEND']);
    const header = chunks[0]!.data;
    expect([header.readUInt32BE(0), header.readUInt32BE(4), ...header.subarray(8)]).toEqual([
      DEMO_IMAGE_PIXELS,
      DEMO_IMAGE_PIXELS,
      8,
      2,
      0,
      0,
      0,
    ]);
    const pixels = inflateSync(chunks[1]!.data);
    expect(pixels).toHaveLength(DEMO_IMAGE_PIXELS * (1 + DEMO_IMAGE_PIXELS * 3));
    // Two colours in stripes: the first pixel differs from one a stripe away.
    expect(pixels.subarray(1, 4)).not.toEqual(pixels.subarray(1 + 8 * 3, 4 + 8 * 3));
  });

  it('the same prompt draws the same images; another index or prompt, another one', async () => {
    const first = await demoImage(PROMPT, 0);
    expect(await demoImage(PROMPT, 0)).toEqual(first);
    expect(await demoImage(PROMPT, 1)).not.toEqual(first);
    expect(await demoImage('a red bicycle', 0)).not.toEqual(first);
  });

  it('response_format b64_json: n images as base64, no prompt echoed', async () => {
    const { response } = await demo.images.generate(
      { model: 'demo/image-small', prompt: PROMPT, n: 2, response_format: 'b64_json' },
      target,
      demoCall(),
    );
    expect(response.created).toBe(Math.floor(NOW / 1000));
    const images = response.data as { b64_json: string }[];
    expect(images).toHaveLength(2);
    expect(Buffer.from(images[0]!.b64_json, 'base64')).toEqual(Buffer.from(await demoImage(PROMPT, 0)));
    expect(Buffer.from(images[1]!.b64_json, 'base64')).toEqual(Buffer.from(await demoImage(PROMPT, 1)));
    expect(JSON.stringify(response)).not.toContain('lighthouse');
  });

  it('by default (url), one data: URL of the PNG', async () => {
    const { response } = await demo.images.generate(
      { model: 'demo/image-small', prompt: PROMPT },
      target,
      demoCall(),
    );
    const expected = Buffer.from(await demoImage(PROMPT, 0)).toString('base64');
    expect(response.data).toEqual([{ url: `data:image/png;base64,${expected}` }]);
  });
});
