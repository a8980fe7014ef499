/** How much of a spending limit is used, as a `<meter>`. */
export function LimitMeter({ spent, limit, label }: { spent: number; limit: number; label: string }) {
  return <meter min={0} max={limit} value={spent} aria-label={label} />;
}
