// A campaign's report (GET /campaigns/{id}/stats): sent, delivered, opens, clicks, bounces, unsubscribes and
// complaints with their rates, the hourly trend of the last 72 hours, and opens and clicks by country.
import { api, unwrap } from '../../api';
import { TimeSeriesChart } from '../../ui/chart';
import { KpiGrid } from '../../ui/kpi';
import { Loading, useLoad } from '../../ui/load';
import { TableWrap } from '../settings/nav';

const percent = (rate: number) => `${(rate * 100).toLocaleString(undefined, { maximumFractionDigits: 1 })} %`;

function Figure(props: { label: string; value: number; rate?: string; testId: string }) {
  return (
    <li class="card kpi" data-testid={props.testId}>
      <span class="kpi-label">{props.label}</span>
      <span class="kpi-value" data-testid={`${props.testId}-value`}>
        {props.value.toLocaleString()}
      </span>
      {props.rate && <span class="delta same">{props.rate}</span>}
    </li>
  );
}

export function CampaignReport(props: { id: string; version: number }) {
  const load = useLoad(() => unwrap(api.GET('/campaigns/{id}/stats', { params: { path: { id: props.id } } })), [props.id, props.version]);
  return (
    <section class="card" aria-labelledby="report-heading">
      <h2 id="report-heading">Report</h2>
      <Loading state={load} what="the report">
        {(s) => (
          <>
            <KpiGrid label="Campaign figures">
              <Figure label="Sent" value={s.sent} testId="kpi-sent" />
              <Figure label="Delivered" value={s.delivered} testId="kpi-delivered" />
              <Figure label="Opened" value={s.unique_opens} rate={`${percent(s.open_rate)} of delivered`} testId="kpi-opens" />
              <Figure label="Clicked" value={s.unique_clicks} rate={`${percent(s.click_rate)} of delivered`} testId="kpi-clicks" />
              <Figure label="Bounced" value={s.bounces} rate={`${percent(s.bounce_rate)} of sent`} testId="kpi-bounces" />
              <Figure label="Unsubscribed" value={s.unsubscribes} rate={`${percent(s.unsubscribe_rate)} of delivered`} testId="kpi-unsubscribes" />
              <Figure label="Complained" value={s.complaints} rate={`${percent(s.complaint_rate)} of delivered`} testId="kpi-complaints" />
            </KpiGrid>
            <div class="charts">
              <TimeSeriesChart
                title="Last 72 hours"
                times={s.hourly_trend.map((h) => Date.parse(h.hour) / 1000)}
                series={(['delivered', 'opens', 'clicks'] as const).map((k) => ({ label: k, values: s.hourly_trend.map((h) => h[k]) }))}
              />
            </div>
            <p class="hint">
              Without machine opens (privacy proxies, scanners): {s.unique_human_opens.toLocaleString()} opened, {s.unique_human_clicks.toLocaleString()}{' '}
              clicked.
            </p>
            {s.countries.length > 0 && (
              <TableWrap label="By country">
                <table data-testid="countries">
                  <caption>By country (the contact's country field)</caption>
                  <thead>
                    <tr>
                      <th scope="col">Country</th>
                      <th scope="col" class="num">
                        Opened
                      </th>
                      <th scope="col" class="num">
                        Clicked
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {s.countries.map((c) => (
                      <tr key={c.country ?? '-'}>
                        <td>{c.country ?? 'None given'}</td>
                        <td class="num">{c.unique_opens.toLocaleString()}</td>
                        <td class="num">{c.unique_clicks.toLocaleString()}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableWrap>
            )}
          </>
        )}
      </Loading>
    </section>
  );
}
