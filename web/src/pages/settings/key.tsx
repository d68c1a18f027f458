// One API key: 30 days of requests (sparkline), its most called routes and answers, whether it looks suspicious, its
// requests now (the rate-limit window), its scopes changed in place, and revocation behind a confirmation.
import { useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso/router';
import { api, ApiError, unwrap } from '../../api';
import { hasRole, identity } from '../../session';
import { Sparkline } from '../../ui/chart';
import { ConfirmButton } from '../../ui/confirm';
import { ErrorNotice, Form, Notice, Submit, useAction } from '../../ui/form';
import { useLoad } from '../../ui/load';
import { SettingsPage, TableWrap, when } from './nav';
import { ScopeList, ScopePicker } from './scopes';

type Key = { id: string; name: string; prefix: string; mode: 'live' | 'test'; scopes: string[]; created_at: string; last_used_at: string | null };
type Activity = {
  calls_per_day: { date: string; count: number }[];
  top_endpoints: { route: string; count: number; errors: number }[];
  status_codes: { status: number; count: number }[];
  p95_latency_ms: number | null;
  suspicious: { flag: boolean; reasons: string[] };
};
type Limits = { requests_last_minute: number; requests_last_hour: number; requests_today: number };

function ActivityCard(props: { id: string; name: string }) {
  const [activity, setActivity] = useState<Activity | undefined>(undefined);
  const [limits, setLimits] = useState<Limits | undefined>(undefined);
  const params = { params: { path: { keyID: props.id } } };
  const load = useLoad(
    () => Promise.all([unwrap(api.GET('/api-keys/{keyID}/activity', params)), unwrap(api.GET('/api-keys/{keyID}/rate-limit-status', params))]),
    [props.id],
    ([a, l]) => {
      setActivity(a);
      setLimits(l);
    },
  );
  return (
    <section class="card" aria-labelledby="activity-heading">
      <div class="page-head">
        <h2 id="activity-heading">Activity</h2>
        <button type="button" class="secondary" onClick={() => load.reload()} disabled={load.loading}>
          {load.loading ? 'Refreshing…' : 'Refresh'}
        </button>
      </div>
      <ErrorNotice error={load.error} />
      {!activity && !load.error && <p class="muted">Loading…</p>}
      {activity?.suspicious.flag && (
        <Notice kind="warning" title="This key looks suspicious">
          {activity.suspicious.reasons.join(' · ')}
        </Notice>
      )}
      {limits && (
        <dl class="stats" data-testid="rate-limit-status">
          <div>
            <dt>This minute</dt>
            <dd>{limits.requests_last_minute}</dd>
          </div>
          <div>
            <dt>Last hour</dt>
            <dd>{limits.requests_last_hour}</dd>
          </div>
          <div>
            <dt>Today (UTC)</dt>
            <dd>{limits.requests_today}</dd>
          </div>
          <div>
            <dt>p95 latency</dt>
            <dd>{activity?.p95_latency_ms != null ? `${Math.round(activity.p95_latency_ms)} ms` : '—'}</dd>
          </div>
        </dl>
      )}
      {activity && (
        <>
          <h3>Requests per day, 30 days</h3>
          <Sparkline values={activity.calls_per_day.map((d) => d.count)} label={`Requests with ${props.name}`} unit="days" width={320} height={48} />
          <p class="hint">Counts are written every few seconds: the latest requests may not show yet.</p>
          <TableWrap label="Most called routes">
            <table>
              <caption>Most called routes</caption>
              <thead>
                <tr>
                  <th scope="col">Route</th>
                  <th scope="col" class="num">
                    Requests
                  </th>
                  <th scope="col" class="num">
                    Failed
                  </th>
                </tr>
              </thead>
              <tbody>
                {activity.top_endpoints.length === 0 && (
                  <tr>
                    <td colSpan={3} class="muted">
                      No requests in 30 days.
                    </td>
                  </tr>
                )}
                {activity.top_endpoints.map((e) => (
                  <tr key={e.route}>
                    <td>
                      <code>{e.route}</code>
                    </td>
                    <td class="num">{e.count}</td>
                    <td class="num">{e.errors}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
          {activity.status_codes.length > 0 && (
            <p>
              Answers:{' '}
              {activity.status_codes.map((s) => (
                <span key={s.status} class={`badge ${s.status < 400 ? 'ok' : 'problem'}`}>
                  {s.status} × {s.count}
                </span>
              ))}
            </p>
          )}
        </>
      )}
    </section>
  );
}

function ChangeScopes(props: { keyRow: Key; onChanged: (scopes: string[]) => void }) {
  const [scopes, setScopes] = useState(props.keyRow.scopes);
  const [done, setDone] = useState(false);
  const save = useAction(async () => {
    setDone(false);
    const answer = await unwrap(api.PATCH('/api-keys/{keyID}/scopes', { params: { path: { keyID: props.keyRow.id } }, body: { scopes } }));
    props.onChanged(answer.scopes);
    setDone(true);
  });
  return (
    <section class="card" aria-labelledby="scopes-heading">
      <h2 id="scopes-heading">Scopes</h2>
      {done && (
        <Notice kind="done" title="Scopes saved">
          The key works with its new scopes from its next request; its secret is unchanged.
        </Notice>
      )}
      <ErrorNotice error={save.error} />
      <Form onSubmit={save.run} label="Change scopes">
        <ScopePicker value={scopes} onChange={setScopes} legend="Scopes of this key" />
        <Submit busy={save.busy}>Save scopes</Submit>
      </Form>
    </section>
  );
}

export default function KeyPage() {
  const { params } = useRoute();
  const { route } = useLocation();
  const id = params['id'] ?? '';
  const who = identity.value;
  const [keyRow, setKeyRow] = useState<Key | null | undefined>(undefined);
  const load = useLoad(
    () => unwrap(api.GET('/api-keys')),
    [id],
    (list) => setKeyRow(list.items.find((k) => k.id === id) ?? null),
  );
  const revoke = useAction(async () => {
    await unwrap(api.DELETE('/api-keys/{keyID}', { params: { path: { keyID: id } } }));
    route('/app/settings/keys');
  });
  const title = keyRow ? `Key “${keyRow.name}”` : 'API key';
  return (
    <SettingsPage title={title}>
      <p>
        <a href="/app/settings/keys">← All keys</a>
      </p>
      <ErrorNotice error={load.error} />
      {keyRow === undefined && !load.error && <p class="muted">Loading…</p>}
      {keyRow === null && <ErrorNotice error={new ApiError(404, 'not_found', 'No active key has this id: it may have been revoked.')} />}
      {keyRow && (
        <>
          <section class="card" aria-labelledby="key-heading">
            <h2 id="key-heading">Details</h2>
            <dl class="details">
              <dt>Prefix</dt>
              <dd>
                <code data-testid="key-prefix">{keyRow.prefix}…</code>
              </dd>
              <dt>Mode</dt>
              <dd>{keyRow.mode === 'live' ? 'Live: sends deliver' : 'Test: sends go to the simulation'}</dd>
              <dt>Scopes</dt>
              <dd>
                <ScopeList scopes={keyRow.scopes} />
              </dd>
              <dt>Created</dt>
              <dd>{when(keyRow.created_at)}</dd>
              <dt>Last used</dt>
              <dd>{keyRow.last_used_at ? when(keyRow.last_used_at) : 'never'}</dd>
            </dl>
          </section>
          <ActivityCard id={keyRow.id} name={keyRow.name} />
          {hasRole(who, 'developer') && (
            <>
              <ChangeScopes keyRow={keyRow} onChanged={(scopes) => setKeyRow({ ...keyRow, scopes })} />
              <section class="card danger-zone" aria-labelledby="revoke-heading">
                <h2 id="revoke-heading">Revoke</h2>
                <p>Revoking stops the key at once: its next request is refused (401). It cannot be undone.</p>
                <ErrorNotice error={revoke.error} />
                <ConfirmButton label="Revoke key" title={`Revoke “${keyRow.name}”?`} onConfirm={() => revoke.run()} busy={revoke.busy}>
                  <p>
                    Anything still using <code>{keyRow.prefix}…</code> stops working now.
                  </p>
                </ConfirmButton>
              </section>
            </>
          )}
        </>
      )}
    </SettingsPage>
  );
}
