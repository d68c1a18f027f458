// Charts drawn with uPlot (canvas): a time series with axes and legend, and a sparkline. uPlot is imported here only,
// and only lazily loaded pages import this module, so it stays out of the entry chunk. Canvas is invisible to screen
// readers: each chart carries an accessible name with its totals, and the time series its figures as a table.
// Colours come from the theme's custom properties (read with getComputedStyle), re-read when the theme changes.
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { theme } from './theme';

/** The palette a chart draws its series in: --chart-1 … --chart-4 of styles.css, then the axes' colours. */
function palette() {
  const style = getComputedStyle(document.documentElement);
  const read = (name: string, fallback: string) => style.getPropertyValue(name).trim() || fallback;
  return {
    series: [read('--chart-1', '#1d4ed8'), read('--chart-2', '#15803d'), read('--chart-3', '#b91c1c'), read('--chart-4', '#a16207')],
    text: read('--muted', '#52525b'),
    grid: read('--border', '#d4d4d8'),
  };
}

/** A counter bumped whenever the colours may have changed: the picker's theme or, on "system", the OS preference. */
function useThemeVersion(): number {
  const [version, setVersion] = useState(0);
  const chosen = theme.value;
  useEffect(() => {
    setVersion((v) => v + 1);
    const media = window.matchMedia('(prefers-color-scheme: dark)');
    const changed = () => setVersion((v) => v + 1);
    media.addEventListener('change', changed);
    return () => media.removeEventListener('change', changed);
  }, [chosen]);
  return version;
}

/** Keeps a uPlot instance the width of its container. */
function useWidth(element: { current: HTMLElement | null }, onWidth: (width: number) => void): void {
  useEffect(() => {
    const el = element.current;
    if (!el) return;
    const observer = new ResizeObserver(() => onWidth(el.clientWidth));
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const number = new Intl.NumberFormat();

function formatTime(seconds: number, spansDays: boolean): string {
  const at = new Date(seconds * 1000);
  return spansDays
    ? at.toLocaleDateString(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' })
    : at.toLocaleTimeString(undefined, { hour: 'numeric', minute: '2-digit', timeZone: 'UTC' });
}

export function TimeSeriesChart(props: { title: string; times: number[] /* unix seconds */; series: { label: string; values: number[] }[]; height?: number }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const version = useThemeVersion();
  const height = props.height ?? 220;
  // Hourly points within a day are labelled with times, daily ones with dates (UTC, as the API buckets them).
  const spansDays = props.times.length > 1 && props.times[1]! - props.times[0]! >= 86_400;

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const colours = palette();
    const axis = { stroke: colours.text, grid: { stroke: colours.grid, width: 1 }, ticks: { stroke: colours.grid, width: 1 } };
    const options: uPlot.Options = {
      width: Math.max(el.clientWidth, 240),
      height,
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(max, 1)] } },
      axes: [
        // At least 80 px between time labels, so they never run into each other on a phone.
        { ...axis, space: 80, values: (_u, ticks) => ticks.map((t) => formatTime(t, spansDays)) },
        { ...axis, values: (_u, ticks) => ticks.map((t) => (Number.isInteger(t) ? number.format(t) : '')) },
      ],
      series: [
        { value: (_u, t) => (t === null ? '' : formatTime(t, spansDays)) },
        ...props.series.map((s, i) => ({ label: s.label, stroke: colours.series[i % colours.series.length]!, width: 2, points: { show: false } })),
      ],
      legend: { live: true },
      cursor: { drag: { x: false, y: false } },
    };
    const data: uPlot.AlignedData = [props.times, ...props.series.map((s) => s.values)];
    plot.current = new uPlot(options, data, el);
    return () => {
      plot.current?.destroy();
      plot.current = null;
    };
  }, [props.times, props.series, version, height, spansDays]);
  useWidth(box, (width) => plot.current?.setSize({ width: Math.max(width, 240), height }));

  const summary = props.series.map((s) => `${s.label} ${number.format(sum(s.values))}`).join(', ');
  return (
    <figure class="chart" aria-label={`${props.title}: ${summary}`}>
      <figcaption>{props.title}</figcaption>
      {/* The canvas and uPlot's legend say nothing a screen reader can use; the table below says it all. */}
      <div ref={box} class="chart-canvas" aria-hidden="true" />
      <details class="chart-data">
        <summary>Show the figures as a table</summary>
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">{props.title}</caption>
            <thead>
              <tr>
                <th scope="col">{spansDays ? 'Day (UTC)' : 'Hour (UTC)'}</th>
                {props.series.map((s) => (
                  <th scope="col" class="num" key={s.label}>
                    {s.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {props.times.map((t, row) => (
                <tr key={t}>
                  <th scope="row">{formatTime(t, spansDays)}</th>
                  {props.series.map((s) => (
                    <td class="num" key={s.label}>
                      {number.format(s.values[row] ?? 0)}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
            <tfoot>
              <tr>
                <th scope="row">Total</th>
                {props.series.map((s) => (
                  <td class="num" key={s.label}>
                    {number.format(sum(s.values))}
                  </td>
                ))}
              </tr>
            </tfoot>
          </table>
        </div>
      </details>
    </figure>
  );
}

/** `unit`: what one value covers, for its spoken name ("over 30 days"); points unless said. */
export function Sparkline(props: { values: number[]; label: string; width?: number; height?: number; unit?: string }) {
  const box = useRef<HTMLSpanElement>(null);
  const version = useThemeVersion();
  const width = props.width ?? 120;
  const height = props.height ?? 32;
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const colours = palette();
    // The x values are only positions: a sparkline has no axis to label.
    const xs = props.values.map((_, i) => i);
    const chart = new uPlot(
      {
        width,
        height,
        pxAlign: false,
        cursor: { show: false },
        select: { show: false, left: 0, top: 0, width: 0, height: 0 },
        legend: { show: false },
        scales: { x: { time: false }, y: { range: (_u, _min, max) => [0, Math.max(max, 1)] } },
        axes: [{ show: false }, { show: false }],
        series: [{}, { stroke: colours.series[0]!, width: 1.5, fill: `${colours.series[0]!}22`, points: { show: false } }],
      },
      [xs, props.values],
      el,
    );
    return () => chart.destroy();
  }, [props.values, version, width, height]);
  const total = sum(props.values);
  const last = props.values.at(-1) ?? 0;
  return (
    <span
      ref={box}
      class="sparkline"
      role="img"
      aria-label={
        `${props.label}: ${number.format(total)} in all over ${props.values.length} ${props.unit ?? 'points'}, ` +
        `latest ${number.format(last)}, highest ${number.format(Math.max(0, ...props.values))}`
      }
    />
  );
}
