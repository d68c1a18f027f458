// The audit log: every audited action of the workspace, newest first, filtered by action, actor, resource and days;
// filters saved by name (each user's own), and the CSV and PDF exports of the date range. The log and its exports are
// the owner's (the API's rule: they hold the same rows); others see the API's refusal.
import { useState } from 'preact/hooks';
import { api, ApiError, unwrap } from '../../api';
import { hasRole, identity } from '../../session';
import { ErrorNotice, Field, Form, Notice, Submit, useAction } from '../../ui/form';
import { useLoad } from '../../ui/load';
import { SettingsPage, TableWrap, when } from './nav';

type Filters = { action: string; actor: string; resource: string; from: string; to: string };
type Entry = {
  id: string;
  time: string;
  action: string;
  actor_type: string;
  actor_id: string | null;
  actor_label: string | null;
  resource_type: string | null;
  resource_id: string | null;
  ip: string | null;
  metadata: Record<string, unknown>;
};
type Saved = { id: string; name: string; definition: { event_type?: string; actor?: string; q?: string; date_from?: string; date_to?: string } };
const EMPTY: Filters = { action: '', actor: '', resource: '', from: '', to: '' };

/** The listing's query: only the filters given (the API's defaults fill the rest). */
function query(f: Filters, before?: string) {
  const q: { action_prefix?: string; actor?: string; resource?: string; from?: string; to?: string; before?: string; limit: number } = { limit: 50 };
  if (f.action.trim()) q.action_prefix = f.action.trim();
  if (f.actor.trim()) q.actor = f.actor.trim();
  if (f.resource.trim()) q.resource = f.resource.trim();
  if (f.from) q.from = f.from;
  if (f.to) q.to = f.to;
  if (before) q.before = before;
  return q;
}

/** The page's filters as a saved filter's definition (the spec's audit page state) and back. */
const definitionOf = (f: Filters): Saved['definition'] =>
  Object.fromEntries(
    Object.entries({ event_type: f.action, actor: f.actor, q: f.resource, date_from: f.from, date_to: f.to }).filter(([, v]) => v.trim() !== ''),
  );
const filtersOf = (d: Saved['definition']): Filters => ({
  action: d.event_type ?? '',
  actor: d.actor ?? '',
  resource: d.q ?? '',
  from: d.date_from ?? '',
  to: d.date_to ?? '',
});

/** Fetches an export with the session cookie and hands it to the browser as a download; a refusal keeps the API's words. */
async function download(url: string, fallbackName: string): Promise<void> {
  const response = await fetch(url, { credentials: 'same-origin' });
  if (!response.ok) {
    const body = (await response.json().catch(() => ({}))) as { error?: string; message?: string };
    throw new ApiError(response.status, body.error ?? 'internal', body.message ?? `the API answered ${response.status}`);
  }
  const name = /filename="([^"]+)"/.exec(response.headers.get('content-disposition') ?? '')?.[1] ?? fallbackName;
  const link = document.createElement('a');
  link.href = URL.createObjectURL(await response.blob());
  link.download = name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
}

function nextDay(date: string): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
}

function SavedFilters(props: { current: Filters; onApply: (f: Filters) => void }) {
  const [items, setItems] = useState<Saved[] | undefined>(undefined);
  const [name, setName] = useState('');
  const load = useLoad(async () => (await unwrap(api.GET('/audit-filters'))).items, [], setItems);
  const save = useAction(async () => {
    await unwrap(api.POST('/audit-filters', { body: { name, definition: definitionOf(props.current) } }));
    setName('');
    await load.reload();
  });
  const remove = useAction(async (id: string) => {
    await unwrap(api.DELETE('/audit-filters/{id}', { params: { path: { id } } }));
    await load.reload();
  });
  return (
    <section class="card" aria-labelledby="saved-heading">
      <h2 id="saved-heading">Saved filters</h2>
      <ErrorNotice error={load.error ?? save.error ?? remove.error} />
      {items?.length === 0 && <p class="muted">None yet: set the filters above, name them and save.</p>}
      {items && items.length > 0 && (
        <ul class="saved-filters" data-testid="saved-filters">
          {items.map((f) => (
            <li key={f.id}>
              <button type="button" class="link" onClick={() => props.onApply(filtersOf(f.definition))} aria-label={`Apply the filter ${f.name}`}>
                {f.name}
              </button>
              <span class="muted">
                {' '}
                {Object.entries(f.definition)
                  .map(([k, v]) => `${k}: ${v}`)
                  .join(', ') || 'no filter'}
              </span>
              <button type="button" class="secondary small" onClick={() => remove.run(f.id)} aria-label={`Delete the filter ${f.name}`}>
                Delete
              </button>
            </li>
          ))}
        </ul>
      )}
      <Form onSubmit={save.run} label="Save these filters">
        <div class="inline">
          <Field label="Name for the current filters" name="filter-name" value={name} onInput={setName} maxLength={200} required />
          <Submit busy={save.busy}>Save filters</Submit>
        </div>
      </Form>
    </section>
  );
}

export default function Audit() {
  const owner = hasRole(identity.value, 'owner');
  const [draft, setDraft] = useState<Filters>(EMPTY);
  const [applied, setApplied] = useState<Filters>(EMPTY);
  const [rows, setRows] = useState<Entry[] | undefined>(undefined);
  const [older, setOlder] = useState<string | null>(null);
  // What is asked for: the filters, and the page of older events (before) or the first one. A new object each time,
  // so applying the same filters again loads again.
  const [request, setRequest] = useState<{ filters: Filters; before?: string }>({ filters: EMPTY });
  const load = useLoad(
    () => unwrap(api.GET('/audit-events', { params: { query: query(request.filters, request.before) } })),
    [request],
    (page) => {
      setRows((list) => (request.before ? [...(list ?? []), ...page.items] : page.items));
      setOlder(page.next_before);
      setApplied(request.filters);
    },
  );
  const apply = (f: Filters) => {
    setDraft(f);
    setRequest({ filters: f });
  };
  const exportCsv = useAction(async () => {
    const q = new URLSearchParams(Object.entries({ from: applied.from, to: applied.to }).filter(([, v]) => v));
    await download(`/api/v1/audit-events.csv?${q}`, 'audit-events.csv');
  });
  const exportPdf = useAction(async () => {
    const q = new URLSearchParams();
    if (applied.from) q.set('since', `${applied.from}T00:00:00Z`);
    if (applied.to) q.set('until', `${nextDay(applied.to)}T00:00:00Z`);
    if (applied.action.trim()) q.set('action_prefix', applied.action.trim());
    await download(`/api/v1/audit-events/export.pdf?${q}`, 'audit-events.pdf');
  });
  const set = (k: keyof Filters) => (v: string) => setDraft({ ...draft, [k]: v });
  return (
    <SettingsPage title="Audit log" lead="Who did what in this workspace, and when: keys made and revoked, team changes, settings, campaigns.">
      <section class="card" aria-labelledby="filters-heading">
        <h2 id="filters-heading">Filters</h2>
        <Form onSubmit={() => apply(draft)} label="Audit filters">
          <div class="filter-grid">
            <Field label="Action" name="action" value={draft.action} onInput={set('action')} hint="A name or its start, e.g. api_key." />
            <Field label="Actor" name="actor" value={draft.actor} onInput={set('actor')} hint="A member's e-mail, or a user or key id." />
            <Field label="Resource" name="resource" value={draft.resource} onInput={set('resource')} hint="A type (api_key) or an id." />
            <Field label="From" name="from" type="date" value={draft.from} onInput={set('from')} hint="UTC day; default 30 days ago." />
            <Field label="To" name="to" type="date" value={draft.to} onInput={set('to')} hint="UTC day, included." />
          </div>
          <div class="actions">
            <Submit busy={load.loading}>Apply filters</Submit>
            <button type="button" class="secondary" onClick={() => apply(EMPTY)}>
              Clear
            </button>
          </div>
        </Form>
      </section>
      <SavedFilters current={draft} onApply={apply} />
      {owner && (
        <section class="card" aria-labelledby="export-heading">
          <h2 id="export-heading">Export</h2>
          <p class="hint">The CSV holds every row of the date range; the PDF the date range and action, with a SHA-256 digest of its rows in every footer.</p>
          <ErrorNotice error={exportCsv.error ?? exportPdf.error} />
          <div class="actions">
            <button type="button" class="secondary" onClick={() => exportCsv.run()} disabled={exportCsv.busy}>
              {exportCsv.busy ? 'Preparing…' : 'Download CSV'}
            </button>
            <button type="button" class="secondary" onClick={() => exportPdf.run()} disabled={exportPdf.busy}>
              {exportPdf.busy ? 'Preparing…' : 'Download PDF'}
            </button>
          </div>
        </section>
      )}
      <ErrorNotice error={load.error} />
      {rows && (
        <TableWrap label="Audit events">
          <table data-testid="audit-table">
            <caption class="visually-hidden">Audit events, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Action</th>
                <th scope="col">Actor</th>
                <th scope="col">Resource</th>
                <th scope="col">Address</th>
              </tr>
            </thead>
            <tbody>
              {rows.length === 0 && (
                <tr>
                  <td colSpan={5} class="muted">
                    Nothing matches these filters.
                  </td>
                </tr>
              )}
              {rows.map((r) => (
                <tr key={r.id}>
                  <td>{when(r.time)}</td>
                  <td>
                    <code>{r.action}</code>
                    {Object.keys(r.metadata).length > 0 && (
                      <details>
                        <summary>Details</summary>
                        <pre>{JSON.stringify(r.metadata, null, 2)}</pre>
                      </details>
                    )}
                  </td>
                  <td>
                    {r.actor_label ?? r.actor_id ?? '—'} <span class="muted">({r.actor_type === 'api_key' ? 'API key' : r.actor_type})</span>
                  </td>
                  <td>{r.resource_type ? `${r.resource_type} ${r.resource_id ?? ''}` : '—'}</td>
                  <td>{r.ip ?? '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      {!rows && !load.error && <p class="muted">Loading…</p>}
      {older && (
        <button type="button" class="secondary" onClick={() => setRequest({ filters: applied, before: older })} disabled={load.loading}>
          Load older events
        </button>
      )}
      {!owner && !load.error && <Notice kind="info">Exports are for owners.</Notice>}
    </SettingsPage>
  );
}
