// KPI cards as Plausible shows them: the figure of the period, and its change against the previous period of the same
// length, with its direction said in words (not by colour alone) and coloured by whether that direction is good.
import type { ComponentChildren } from 'preact';
import { Sparkline } from './chart';

const number = new Intl.NumberFormat();

export interface Change {
  /** 'new' when the previous period had none, 'same' when equal. */
  direction: 'up' | 'down' | 'same' | 'new';
  /** Whole percent of the previous figure; undefined for 'new'. */
  percent?: number;
}

/** The change from `previous` to `current`, rounded to a whole percent. */
export function changeOf(current: number, previous: number): Change {
  if (current === previous) return { direction: 'same', percent: 0 };
  if (previous === 0) return { direction: 'new' };
  const percent = Math.round((Math.abs(current - previous) / previous) * 100);
  return { direction: current > previous ? 'up' : 'down', percent };
}

/** Which way is good news: more deliveries, fewer bounces. */
export type Better = 'up' | 'down';

function Delta(props: { change: Change; better: Better; previousLabel: string }) {
  const { direction, percent } = props.change;
  if (direction === 'same') return <span class="delta same">No change on {props.previousLabel}</span>;
  if (direction === 'new') return <span class="delta same">None in {props.previousLabel}</span>;
  const tone = direction === props.better ? 'good' : 'bad';
  const arrow = direction === 'up' ? '↑' : '↓';
  return (
    <span class={`delta ${tone}`}>
      <span aria-hidden="true">{arrow} </span>
      {direction === 'up' ? 'Up' : 'Down'} {percent} % on {props.previousLabel}
    </span>
  );
}

export function KpiCard(props: {
  label: string;
  value: number;
  previous: number;
  better: Better;
  /** e.g. "the previous 7 days" */
  previousLabel: string;
  /** The period's points, drawn as a sparkline. */
  trend?: number[];
  testId?: string;
}) {
  return (
    <li class="card kpi" data-testid={props.testId}>
      <span class="kpi-label">{props.label}</span>
      <span class="kpi-value" data-testid={props.testId ? `${props.testId}-value` : undefined}>
        {number.format(props.value)}
      </span>
      <Delta change={changeOf(props.value, props.previous)} better={props.better} previousLabel={props.previousLabel} />
      {props.trend && props.trend.length > 1 && <Sparkline values={props.trend} label={`${props.label} per interval`} />}
    </li>
  );
}

/** The row of KPI cards: a list, so a screen reader announces how many. */
export function KpiGrid(props: { label: string; children: ComponentChildren }) {
  return (
    <ul class="kpis" aria-label={props.label}>
      {props.children}
    </ul>
  );
}
