/**
 * Seeds and a small seeded PRNG (mulberry32), so a failing run can be replayed: every reliability
 * file derives its own seed from one base seed, prints both, and `RELIABILITY_SEED=<base>` replays
 * the same plan (the same chaos picks, the same load mix, the same fast-check inputs).
 */

/** The run's base seed: `RELIABILITY_SEED` when set, else a fresh one per run (printed). */
export function baseSeed(): number {
  const fromEnv = process.env.RELIABILITY_SEED;
  if (fromEnv !== undefined && fromEnv.trim() !== '') {
    const parsed = Number(fromEnv);
    if (!Number.isSafeInteger(parsed) || parsed < 0) {
      throw new Error(`RELIABILITY_SEED must be a non-negative integer, got "${fromEnv}"`);
    }
    return parsed >>> 0;
  }
  return (Date.now() ^ (process.pid << 16) ^ Math.floor(Math.random() * 0xffffffff)) >>> 0;
}

const BASE = baseSeed();

/** The seed of one check, derived from the base seed and the check's name; printed once. */
export function seedFor(label: string): number {
  const seed = hashSeed(BASE, label);
  console.info(
    `[reliability] ${label}: seed ${seed} (base seed ${BASE}; replay with RELIABILITY_SEED=${BASE})`,
  );
  return seed;
}

/** A 32-bit hash of a seed and some parts (FNV-1a over their text, then a murmur finaliser). */
export function hashSeed(seed: number, ...parts: (string | number)[]): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  const text = parts.join('\u0000');
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  h ^= h >>> 16;
  return h >>> 0;
}

/** mulberry32: small, fast, and good enough to pick chaos. */
export class Prng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [lo, hi], both included. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** A key of `weights`, with probability proportional to its weight. */
  weighted<K extends string>(weights: Partial<Record<K, number>>): K {
    const entries = Object.entries(weights).filter(([, w]) => (w as number) > 0) as [K, number][];
    const total = entries.reduce((sum, [, w]) => sum + w, 0);
    if (total <= 0) throw new Error('weighted pick with no positive weight');
    let roll = this.next() * total;
    for (const [key, weight] of entries) {
      roll -= weight;
      if (roll < 0) return key;
    }
    return entries[entries.length - 1]![0];
  }
}
