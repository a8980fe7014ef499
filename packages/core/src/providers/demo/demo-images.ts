import { base64 } from '../../base64url.js';
import type { DemoJsonAnswer } from './demo-json-answer.js';
import { encodePng, type Rgb } from './demo-png.js';
import { fnv1a } from './demo-terms.js';

/** Width and height of every demo image, whatever `size` asks: small enough to print in a terminal. */
export const DEMO_IMAGE_PIXELS = 64;

/**
 * `POST /images/generations` of the demo upstream: `n` images (default 1), each a 64 × 64 PNG of
 * diagonal stripes whose two colours come from the prompt's hash and the image's index (the same
 * prompt draws the same images). `response_format: "b64_json"` gets them as base64; otherwise (OpenAI's
 * default, `url`) as `data:image/png;base64,…` URLs, since an offline demo has no place to host files.
 * The prompt is not echoed back (no `revised_prompt`).
 */
export async function demoImages(body: Record<string, unknown>, now: () => number): Promise<DemoJsonAnswer> {
  const prompt = String(body.prompt ?? '');
  const n = typeof body.n === 'number' && Number.isInteger(body.n) && body.n > 0 ? body.n : 1;
  const data: Record<string, string>[] = [];
  for (let index = 0; index < n; index++) {
    const png = base64(await demoImage(prompt, index));
    data.push(
      body.response_format === 'b64_json' ? { b64_json: png } : { url: `data:image/png;base64,${png}` },
    );
  }
  return { status: 200, body: { created: Math.floor(now() / 1000), data } };
}

/** The `index`-th demo image of a prompt, as PNG bytes. */
export function demoImage(prompt: string, index: number): Promise<Uint8Array> {
  const background = colourOf(fnv1a(prompt));
  const stripe = colourOf(fnv1a(`${prompt}\u0000${index}`));
  return encodePng(DEMO_IMAGE_PIXELS, DEMO_IMAGE_PIXELS, (x, y) =>
    Math.floor((x + y) / 8) % 2 === 0 ? background : stripe,
  );
}

function colourOf(hash: number): Rgb {
  return [hash & 0xff, (hash >>> 8) & 0xff, (hash >>> 16) & 0xff];
}
