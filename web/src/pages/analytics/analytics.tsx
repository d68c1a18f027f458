// Analytics and reputation: sends and engagement by hour or day over a chosen range (GET /analytics/rollup), cohort
// retention, each mailbox provider's figures and score, the automatic suppressions providers caused, and the goals.
import { useState } from 'preact/hooks';
import { api, unwrap, unwrapList } from '../../api';
import { TimeSeriesChart } from '../../ui/chart';
import { useTitle } from '../../ui/layout';
import { Loading, useLoad } from '../../ui/load';
import { ProviderTable } from '../overview-health';
import { TableWrap, when } from '../settings/nav';
import { CohortRetention } from './cohorts';

const HOUR = 3_600_000;
const RANGES = {
  '72h': { label: 'Last 72 hours', ms: 72 * HOUR, granularity: 'hour' },
  '30d': { label: 'Last 30 days', ms: 30 * 24 * HOUR, granularity: 'day' },
  '90d': { label: 'Last 90 days', ms: 90 * 24 * HOUR, granularity: 'day' },
} as const;
type Range = keyof typeof RANGES;
const KEYS = ['sent', 'delivered', 'bounced', 'opened', 'clicked', 'complained'] as const;

function Rollup() {
  const [range, setRange] = useState<Range>('30d');
  const r = RANGES[range];
  const load = useLoad(
    () => unwrap(api.GET('/analytics/rollup', { params: { query: { since: new Date(Date.now() - r.ms).toISOString(), granularity: r.granularity } } })),
    [range],
  );
  return (
    <section class="card" aria-labelledby="rollup-heading">
      <h2 id="rollup-heading">Sending and engagement</h2>
      <label class="field">
        <span class="label">Range</span>
        <select value={range} onChange={(e) => setRange((e.currentTarget as HTMLSelectElement).value as Range)}>
          {Object.entries(RANGES).map(([key, v]) => (
            <option key={key} value={key}>
              {v.label} (by {v.granularity})
            </option>
          ))}
        </select>
      </label>
      <Loading state={load} what="the figures">
        {(p) => {
          const times = p.buckets.map((b) => Date.parse(b.start) / 1000);
          const series = (keys: (typeof KEYS)[number][]) => keys.map((k) => ({ label: k, values: p.buckets.map((b) => b[k]) }));
          const totals = Object.fromEntries(KEYS.map((k) => [k, p.buckets.reduce((sum, b) => sum + b[k], 0)]));
          return (
            <>
              <p data-testid="rollup-totals">{KEYS.map((k) => `${totals[k]!.toLocaleString()} ${k}`).join(' · ')}</p>
              <p class="hint">Times in UTC, by {p.granularity}; refreshed every 5 minutes. Opens and clicks leave out machine opens and link scanners.</p>
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

function AutomaticSuppressions() {
  const load = useLoad(() => unwrap(api.GET('/analytics/esp-suppressions')), []);
  return (
    <section class="card" aria-labelledby="esp-suppressions-heading">
      <h2 id="esp-suppressions-heading">Automatic pauses by provider</h2>
      <p class="muted">When a provider blocks or defers a burst of mail, Mailpath stops sending to it for a while on its own.</p>
      <Loading state={load} what="the pauses">
        {(r) =>
          r.items.length === 0 ? (
            <p>None in the last 7 days.</p>
          ) : (
            <TableWrap label="Automatic pauses">
              <table data-testid="esp-suppressions">
                <caption class="visually-hidden">Automatic pauses, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Provider</th>
                    <th scope="col">Why</th>
                    <th scope="col">From</th>
                    <th scope="col">Until</th>
                  </tr>
                </thead>
                <tbody>
                  {r.items.map((s) => (
                    <tr key={s.id}>
                      <td>{s.esp}</td>
                      <td>
                        {s.reason === 'blocked' ? 'blocked' : 'many deferrals'}: {s.refusals} in {s.window_minutes} min
                        {s.sample_reply && <span class="hint block mono">{s.sample_reply}</span>}
                      </td>
                      <td class="nowrap">{when(s.triggered_at)}</td>
                      <td class="nowrap">{s.active ? when(s.expires_at) : `ended ${when(s.revoked_at ?? s.expires_at)}`}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableWrap>
          )
        }
      </Loading>
    </section>
  );
}

function Goals() {
  const load = useLoad(() => unwrapList(api.GET('/goals', { params: { query: { limit: 100 } } })), []);
  return (
    <section class="card" aria-labelledby="goals-heading">
      <h2 id="goals-heading">Goals</h2>
      <p class="muted">A click on a link that matches a goal counts as a conversion in the campaign's report.</p>
      <Loading state={load} what="the goals">
        {(page) =>
          page.items.length === 0 ? (
            <p>No goals yet.</p>
          ) : (
            <TableWrap label="Goals">
              <table data-testid="goals">
                <caption class="visually-hidden">Goals</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Matches</th>
                    <th scope="col" class="num">
                      Revenue
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {page.items.map((g) => (
                    <tr key={g.id}>
                      <td>{g.name}</td>
                      <td class="mono break">
                        {g.match_type.replaceAll('_', ' ')} {g.match_value}
                      </td>
                      <td class="num">{g.revenue_cents !== null ? (g.revenue_cents / 100).toFixed(2) : g.revenue_param ? `from ?${g.revenue_param}` : '—'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableWrap>
          )
        }
      </Loading>
    </section>
  );
}

export default function Analytics() {
  useTitle('Analytics');
  return (
    <>
      <h1>Analytics</h1>
      <Rollup />
      <CohortRetention />
      <section class="card">
        <ProviderTable />
      </section>
      <AutomaticSuppressions />
      <Goals />
    </>
  );
}
