// The rest of a campaign's report: clicks by link (the share of each drawn as
// a bar), goal conversions with revenue, and the engagement CSV (every event, for the caller's own analysis).
import { api, unwrap } from '../../api';
import { Loading, useLoad } from '../../ui/load';
import { TableWrap } from '../settings/nav';

export function Engagement(props: { id: string; version: number }) {
  const load = useLoad(async () => {
    const path = { params: { path: { id: props.id } } };
    const [heatmap, goals] = await Promise.all([
      unwrap(api.GET('/campaigns/{id}/click-heatmap', path)),
      unwrap(api.GET('/campaigns/{id}/goal-conversions', path)),
    ]);
    return { heatmap, goals };
  }, [props.id, props.version]);
  return (
    <section class="card" aria-labelledby="engagement-heading">
      <h2 id="engagement-heading">Engagement</h2>
      <Loading state={load} what="the engagement">
        {({ heatmap, goals }) => (
          <>
            <h3>Clicks by link</h3>
            {heatmap.by_url.length === 0 ? (
              <p>No clicks yet.</p>
            ) : (
              <TableWrap label="Clicks by link">
                <table data-testid="clicks-by-link">
                  <caption class="visually-hidden">Clicks by link ({heatmap.total_clicks} in all)</caption>
                  <thead>
                    <tr>
                      <th scope="col">Link</th>
                      <th scope="col" class="num">
                        Clicks
                      </th>
                      <th scope="col">Share</th>
                    </tr>
                  </thead>
                  <tbody>
                    {heatmap.by_url.map((u) => (
                      <tr key={u.url}>
                        <td class="break mono">{u.url}</td>
                        <td class="num">{u.clicks.toLocaleString()}</td>
                        <td>
                          <meter min={0} max={100} value={u.pct_of_total} aria-label={`${u.url}: ${Math.round(u.pct_of_total)} % of clicks`} />{' '}
                          {Math.round(u.pct_of_total)} %
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableWrap>
            )}
            <h3>Goal conversions</h3>
            <p data-testid="goal-conversions">
              {goals.total_conversions.toLocaleString()} conversions by {goals.unique_converters.toLocaleString()} contacts,{' '}
              {(goals.revenue_cents / 100).toFixed(2)} in revenue
            </p>
            {goals.by_goal.length > 0 && (
              <ul>
                {goals.by_goal.map((g) => (
                  <li key={g.goal_id ?? g.goal_name}>
                    {g.goal_name}: {g.conversions.toLocaleString()} ({(g.revenue_cents / 100).toFixed(2)})
                  </li>
                ))}
              </ul>
            )}
            <p>
              <a href={`/api/v1/campaigns/${props.id}/engagement.csv`} download>
                Download every event (CSV)
              </a>{' '}
              <span class="hint">Needs the audit export permission.</span>
            </p>
          </>
        )}
      </Loading>
    </section>
  );
}
