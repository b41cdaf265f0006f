import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot, { type AlignedData, type Options } from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartSeries {
  label: string;
  values: (number | null)[];
}

const PALETTE = ['#2f7ed8', '#d9534f', '#3aa657', '#e08e0b', '#8e5ea2', '#17a2b8', '#6c757d'];

/** A uPlot line chart over minute buckets (`x` in seconds since the epoch), resized with its box. */
export function Chart({ title, x, series, unit }: { title: string; x: number[]; series: ChartSeries[]; unit: string }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const shape = series.map((s) => s.label).join('\u0000');

  const scheme = useColorScheme();

  useEffect(() => {
    const el = box.current!;
    // uPlot draws its axes on a canvas, which knows no `currentColor` (it fell back to black, unreadable
    // in dark mode): the text colour is resolved here, and the chart rebuilt when the scheme changes.
    const text = getComputedStyle(el).color;
    const axis = { stroke: text, ticks: { stroke: text }, grid: { stroke: 'rgba(128,128,128,0.25)' } };
    const options: Options = {
      width: Math.max(el.clientWidth, 280),
      height: 200,
      series: [{}, ...series.map((s, i) => ({ label: s.label, stroke: PALETTE[i % PALETTE.length]!, width: 2, points: { show: true } }))],
      axes: [axis, { ...axis, label: unit }],
      scales: { x: { time: true } },
    };
    const chart = new uPlot(options, [x, ...series.map((s) => s.values)] as AlignedData, el);
    plot.current = chart;
    const resize = new ResizeObserver(() => chart.setSize({ width: Math.max(el.clientWidth, 280), height: 200 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      chart.destroy();
      plot.current = null;
    };
    // Rebuilt only when the series or the colour scheme change; new data goes through setData below.
  }, [shape, unit, scheme]);

  useEffect(() => {
    plot.current?.setData([x, ...series.map((s) => s.values)] as AlignedData);
  });

  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div ref={box} role="img" aria-label={`${title}: ${series.map((s) => s.label).join(', ')}`} />
    </figure>
  );
}

/** 'dark' or 'light', following the system as the page's CSS does. */
function useColorScheme(): 'dark' | 'light' {
  const query = matchMedia('(prefers-color-scheme: dark)');
  const [dark, setDark] = useState(query.matches);
  useEffect(() => {
    const changed = (event: MediaQueryListEvent) => setDark(event.matches);
    query.addEventListener('change', changed);
    return () => query.removeEventListener('change', changed);
  }, []);
  return dark ? 'dark' : 'light';
}
