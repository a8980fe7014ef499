import type { Feature } from '../../pipeline/feature.js';
import { presetsRoutes } from './presets-routes.js';
import { resolvePreset } from './resolve-preset.js';

/** Presets: `/v1/presets`, and a preset a request names merged into its body before validation. */
export const presetsFeature: Feature = {
  name: 'presets',
  routes: presetsRoutes,
  resolveBody: (raw, ctx) => resolvePreset(raw, ctx, ctx.placeSystem),
};
