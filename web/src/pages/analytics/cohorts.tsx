// Cohort retention as a heat table (GET /analytics/cohort-retention): one row per acquisition week, one column per
// week since, each cell the share of the cohort with an open, click or send that week, shaded in six steps (classes,
// not inline styles: the CSP allows none) and said in figures.
import { useState } from 'preact/hooks';
import { api, unwrap } from '../../api';
import { Loading, useLoad } from '../../ui/load';
import { TableWrap } from '../settings/nav';

type Metric = 'opened' | 'clicked' | 'sent';

const shade = (share: number) => `heat-${Math.min(5, Math.ceil(share * 5))}`;

export function CohortRetention() {
  const [metric, setMetric] = useState<Metric>('opened');
  const [weeks, setWeeks] = useState(8);
  const load = useLoad(() => unwrap(api.GET('/analytics/cohort-retention', { params: { query: { metric, weeks } } })), [metric, weeks]);
  return (
    <section class="card" aria-labelledby="cohorts-heading">
      <h2 id="cohorts-heading">Cohort retention</h2>
      <div class="search-row">
        <label class="field">
          <span class="label">Contacts who</span>
          <select value={metric} onChange={(e) => setMetric((e.currentTarget as HTMLSelectElement).value as Metric)}>
            <option value="opened">opened</option>
            <option value="clicked">clicked</option>
            <option value="sent">were sent mail</option>
          </select>
        </label>
        <label class="field">
          <span class="label">Weeks</span>
          <select value={String(weeks)} onChange={(e) => setWeeks(Number((e.currentTarget as HTMLSelectElement).value))}>
            {[4, 8, 12].map((w) => (
              <option key={w} value={String(w)}>
                {w}
              </option>
            ))}
          </select>
        </label>
      </div>
      <Loading state={load} what="the cohorts">
        {(r) =>
          r.cohorts.length === 0 ? (
            <p>No contacts were added in these weeks.</p>
          ) : (
            <TableWrap label="Cohort retention">
              <table data-testid="cohorts" class="heat-table">
                <caption class="visually-hidden">Share of each week's new contacts who {metric} in each week since</caption>
                <thead>
                  <tr>
                    <th scope="col">Week added</th>
                    <th scope="col" class="num">
                      Contacts
                    </th>
                    {Array.from({ length: r.max_weeks }, (_, i) => (
                      <th key={i} scope="col" class="num">
                        Week {i}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {r.cohorts.map((c) => (
                    <tr key={c.week_start} data-testid="cohort-row">
                      <th scope="row" class="nowrap">
                        {c.week_start}
                      </th>
                      <td class="num">{c.size.toLocaleString()}</td>
                      {c.retention.map((share, i) => (
                        <td key={i} class={share === null ? 'num muted' : `num ${shade(share)}`}>
                          {share === null ? '–' : `${Math.round(share * 100)} %`}
                        </td>
                      ))}
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
