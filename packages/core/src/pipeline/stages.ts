import type { CallHooks } from './call.js';
import type { Feature } from './feature.js';

/**
 * The metered call's stages, in the order a request goes through them (`run-metered-call.ts`):
 * the raw body resolved, the record started, routes and worst case planned, credit held, the
 * upstream called (or its stream opened), the answer sent (or streamed), the charge settled, the
 * span exported.
 */
export const STAGES = [
  'resolve',
  'record',
  'plan',
  'hold',
  'call',
  'stream',
  'answer',
  'settle',
  'span',
] as const;

type Stage = (typeof STAGES)[number];

/** The stage each hook runs at (`docs/architecture.md` draws the same table). */
export const HOOK_STAGES: Readonly<
  Record<Exclude<keyof Feature, 'name' | 'routes' | 'chargeLines'> | keyof CallHooks, Stage>
> = {
  resolveBody: 'resolve',
  around: 'record',
  open: 'record',
  body: 'plan',
  reachable: 'plan',
  routes: 'plan',
  worstCase: 'plan',
  cacheable: 'plan',
  beforeHold: 'hold',
  afterHold: 'hold',
  watch: 'stream',
  checkAnswer: 'answer',
  answered: 'answer',
  settled: 'settle',
};
