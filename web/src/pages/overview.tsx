// The overview: what the account sent and how it landed over 24 hours, 7 or 30 days (KPI cards against the previous
// period, charts from the analytics rollups), then its health: quota, trust score, providers, domains' warm-up.
import { useLocation } from 'preact-iso/router';
import { api, unwrap } from '../api';
import { TimeSeriesChart } from '../ui/chart';
import { KpiCard, KpiGrid, type Better } from '../ui/kpi';
import { useTitle } from '../ui/layout';
import { Loading, useLoad } from '../ui/load';
import { DomainsWarmup, loadReputation, ProviderTable, QuotaCard, SetupCard, TrustScore } from './overview-health';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** A period as the picker offers it: its length in buckets of the rollup's granularity. */
const PERIODS = {
  '24h': { label: 'Last 24 hours', previous: 'the previous 24 hours', granularity: 'hour', buckets: 24 },
  '7d': { label: 'Last 7 days', previous: 'the previous 7 days', granularity: 'day', buckets: 7 },
  '30d': { label: 'Last 30 days', previous: 'the previous 30 days', granularity: 'day', buckets: 30 },
} as const;
type Period = keyof typeof PERIODS;
const isPeriod = (value: string | undefined): value is Period => value !== undefined && value in PERIODS;

const METRICS: { key: 'sent' | 'delivered' | 'bounced' | 'complained' | 'opened' | 'clicked'; label: string; better: Better }[] = [
  { key: 'sent', label: 'Sent', better: 'up' },
  { key: 'delivered', label: 'Delivered', better: 'up' },
  { key: 'bounced', label: 'Bounced', better: 'down' },
  { key: 'complained', label: 'Complained', better: 'down' },
  { key: 'opened', label: 'Opened', better: 'up' },
  { key: 'clicked', label: 'Clicked', better: 'up' },
];

/**
 * The period and the one before it in one rollup read: the last 2 × N hours or UTC days up to now, the current hour or
 * day (so far) included. The first half is the previous period, the second the current one.
 */
async function loadRollup(period: Period) {
  const p = PERIODS[period];
  const now = Date.now();
  const unit = p.granularity === 'hour' ? HOUR : DAY;
  const since = new Date(Math.floor(now / unit) * unit - (2 * p.buckets - 1) * unit);
  const report = await unwrap(
    api.GET('/analytics/rollup', { params: { query: { since: since.toISOString(), until: new Date(now).toISOString(), granularity: p.granularity } } }),
  );
  const buckets = report.buckets.slice(-2 * p.buckets);
  return { previous: buckets.slice(0, -p.buckets), current: buckets.slice(-p.buckets) };
}
type Bucket = Awaited<ReturnType<typeof loadRollup>>['current'][number];

const total = (buckets: Bucket[], key: (typeof METRICS)[number]['key']) => buckets.reduce((sum, b) => sum + b[key], 0);

function PeriodPicker(props: { period: Period; onPick: (period: Period) => void }) {
  return (
    <fieldset class="segmented">
      <legend class="visually-hidden">Period</legend>
      {(Object.keys(PERIODS) as Period[]).map((key) => (
        <label key={key} class={props.period === key ? 'checked' : undefined}>
          <input type="radio" name="period" value={key} checked={props.period === key} onChange={() => props.onPick(key)} />
          {PERIODS[key].label}
        </label>
      ))}
    </fieldset>
  );
}

function Activity(props: { period: Period }) {
  const p = PERIODS[props.period];
  const rollup = useLoad(() => loadRollup(props.period), [props.period]);
  return (
    <section aria-labelledby="activity-heading">
      <h2 id="activity-heading">{p.label}</h2>
      <Loading state={rollup} what="the figures">
        {({ current, previous }) => {
          const times = current.map((b) => Date.parse(b.start) / 1000);
          const series = (keys: (typeof METRICS)[number]['key'][]) =>
            keys.map((key) => ({ label: METRICS.find((m) => m.key === key)!.label, values: current.map((b) => b[key]) }));
          return (
            <>
              <KpiGrid label={`Figures of the ${p.label.toLowerCase()}`}>
                {METRICS.map((m) => (
                  <KpiCard
                    key={m.key}
                    label={m.label}
                    value={total(current, m.key)}
                    previous={total(previous, m.key)}
                    better={m.better}
                    previousLabel={p.previous}
                    trend={current.map((b) => b[m.key])}
                    testId={`kpi-${m.key}`}
                  />
                ))}
              </KpiGrid>
              <p class="hint">Times in UTC; the current {p.granularity} so far is included. Opens and clicks leave out machine opens and link scanners.</p>
              <div class="charts">
                <TimeSeriesChart title="Sending" times={times} series={series(['sent', 'delivered', 'bounced'])} />
                <TimeSeriesChart title="Engagement" times={times} series={series(['opened', 'clicked', 'complained'])} />
              </div>
            </>
          );
        }}
      </Loading>
    </section>
  );
}

export default function Overview() {
  useTitle('Overview');
  const { query, path, route } = useLocation();
  // The period is in the address, so a reload or a shared link keeps it.
  const period: Period = isPeriod(query['period']) ? query['period'] : '7d';
  const reputation = useLoad(loadReputation, []);
  return (
    <>
      <div class="page-head">
        <h1>Overview</h1>
        <PeriodPicker period={period} onPick={(next) => route(`${path}?period=${next}`, true)} />
      </div>
      {reputation.data && !reputation.data.domains.some((d) => d.verified) && <SetupCard />}
      <Activity period={period} />
      <div class="health">
        <QuotaCard />
        <TrustScore />
      </div>
      <ProviderTable />
      <DomainsWarmup state={reputation} />
    </>
  );
}
