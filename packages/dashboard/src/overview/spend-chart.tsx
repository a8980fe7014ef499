import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import type { DailyUsage } from '../api/api-types.js';
import { formatUsd } from '../format/format-usd.js';

const HEIGHT = 240;
const HALF_DAY_S = 43_200;

/** Spend per UTC day as bars (uPlot); redrawn when the series changes, resized with its box. */
export function SpendChart({ days }: { days: DailyUsage[] }) {
  const box = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const xs = days.map((day) => Date.parse(day.date) / 1000);
    // Dollars as floats only for drawing: the axis and the labels format them back to USD text.
    const ys = days.map((day) => day.cost_micros / 1_000_000);
    const bars = uPlot.paths.bars?.({ size: [0.7, 40] });
    const chart = new uPlot(
      {
        width: Math.max(element.clientWidth, 280),
        height: HEIGHT,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        legend: { show: true },
        cursor: { drag: { x: false, y: false } },
        scales: {
          // Half a day of room each side, so the first and last bars are not cut in half.
          x: { time: true, range: (_u, min, max) => [min - HALF_DAY_S, max + HALF_DAY_S] },
          y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
        },
        series: [
          { label: 'Day (UTC)', value: '{YYYY}-{MM}-{DD}' },
          {
            label: 'Spend',
            stroke: '#2563eb',
            fill: 'rgba(37, 99, 235, 0.35)',
            value: (_u, v) => (v === null ? '–' : formatUsd(v)),
            ...(bars && { paths: bars, points: { show: false } }),
          },
        ],
        axes: [{}, { size: 70, values: (_u, ticks) => ticks.map((v) => formatUsd(v)) }],
      },
      [xs, ys],
      element,
    );
    const observer = new ResizeObserver(() =>
      chart.setSize({ width: Math.max(element.clientWidth, 280), height: HEIGHT }),
    );
    observer.observe(element);
    return () => {
      observer.disconnect();
      chart.destroy();
    };
  }, [days]);

  // What the bars show, for a reader or a test: the window and its total in integer micros.
  const totalMicros = days.reduce((sum, day) => sum + day.cost_micros, 0);
  return (
    <div
      class="chart"
      data-testid="spend-chart"
      data-days={days.length}
      data-total-micros={totalMicros}
      ref={box}
      role="img"
      aria-label={`Spend per day over the last ${days.length} days`}
    />
  );
}
