// The activity feed: every send of the workspace, newest first, searched with a typed query (to:, from:, status:,
// campaign:, before:, after:, free text), a page at a time (the API's next_cursor), each linking to its message page.
import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso/router';
import { api, unwrapList } from '../api';
import { Field, Form } from '../ui/form';
import { useTitle } from '../ui/layout';
import { Loading, useLoad } from '../ui/load';
import { parseSearch, type SendQuery } from './activity-search';

const PAGE_SIZE = 50;

export const STATUS_TONE: Record<string, string> = {
  delivered: 'ok',
  simulated: 'ok',
  queued: '',
  sending: '',
  deferred: 'warning',
  dropped: 'problem',
  bounced: 'problem',
  failed: 'problem',
};

export function StatusBadge(props: { status: string }) {
  return <span class={`badge ${STATUS_TONE[props.status] ?? ''}`}>{props.status}</span>;
}

const when = (at: string) => new Date(at).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });

function loadSends(query: SendQuery, after: string | undefined) {
  return unwrapList(api.GET('/sends', { params: { query: { ...query, limit: PAGE_SIZE, ...(after ? { after } : {}) } } }));
}

function SendTable(props: { query: SendQuery; search: string }) {
  // Cursors of the pages before this one, so "Newer" can go back: the API's cursors only lead to older sends.
  // Keyed by the search (below): a new search starts again at its first page.
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const after = cursors.at(-1);
  // The page's number travels with its rows: while the next page loads, the rows shown and the number said agree.
  const number = cursors.length;
  const page = useLoad(async () => ({ ...(await loadSends(props.query, after)), number }), [props.search, after]);
  return (
    <Loading state={page} what="the sends">
      {({ items, next_cursor, total, number: shown }) => (
        <>
          <p role="status" data-testid="match-count">
            {total === 1 ? '1 send' : `${total.toLocaleString()} sends`}
            {props.search ? ' match' : ''}
            {total > PAGE_SIZE ? `; page ${shown}` : ''}
          </p>
          {items.length === 0 ? (
            <p>{props.search ? 'No send matches this search.' : 'Nothing sent yet. Sends appear here the moment the API accepts them.'}</p>
          ) : (
            <div class="table-wrap">
              <table data-testid="sends" aria-busy={page.loading ? 'true' : undefined}>
                <caption class="visually-hidden">Sends, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Accepted</th>
                    <th scope="col">To</th>
                    <th scope="col">Subject</th>
                    <th scope="col">From</th>
                    <th scope="col">Status</th>
                  </tr>
                </thead>
                <tbody>
                  {items.map((s) => (
                    <tr key={s.id} data-testid="send-row">
                      <td class="nowrap">{when(s.created_at)}</td>
                      <td class="break">{s.to}</td>
                      <td>
                        <a href={`/app/activity/${s.id}`}>{s.subject || '(no subject)'}</a>
                        {s.mode === 'test' && <span class="badge"> test key</span>}
                      </td>
                      <td class="break">{s.from_email}</td>
                      <td>
                        <StatusBadge status={s.status} />
                        {s.status_detail && <span class="hint block">{s.status_detail}</span>}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {(cursors.length > 1 || next_cursor) && (
            <nav class="pager" aria-label="Pages of sends">
              {/* Still while a page loads: a second click would step from the page not shown yet. */}
              <button type="button" class="secondary" disabled={page.loading || cursors.length < 2} onClick={() => setCursors((c) => c.slice(0, -1))}>
                Newer
              </button>
              <button
                type="button"
                class="secondary"
                disabled={page.loading || !next_cursor}
                onClick={() => next_cursor && setCursors((c) => [...c, next_cursor])}
              >
                Older
              </button>
            </nav>
          )}
        </>
      )}
    </Loading>
  );
}

export default function Activity() {
  useTitle('Activity');
  const { query, path, route } = useLocation();
  // The search is in the address: the back button and a shared link give the same list.
  const search = query['search'] ?? '';
  const [text, setText] = useState(search);
  useEffect(() => setText(search), [search]);
  const parsed = parseSearch(search);
  const typed = parseSearch(text);
  const submit = () => {
    if (!typed.ok) return;
    const next = text.trim();
    route(next ? `${path}?search=${encodeURIComponent(next)}` : path);
  };
  return (
    <>
      <h1>Activity</h1>
      <search>
        <Form onSubmit={submit}>
          <div class="search-row">
            <Field
              label="Search sends"
              name="search"
              type="search"
              value={text}
              onInput={setText}
              spellcheck={false}
              placeholder="to:ann@example.com status:bounced after:2026-12-01"
              hint="to:, from:, status:, campaign:, before: and after: (a date or time, UTC), then any words of the subject or an address."
              error={typed.ok ? undefined : typed.error}
            />
            <button type="submit">Search</button>
            {search && (
              <button type="button" class="secondary" onClick={() => route(path)}>
                Clear
              </button>
            )}
          </div>
        </Form>
      </search>
      {parsed.ok ? <SendTable key={search} query={parsed.query} search={search} /> : <p class="field-error">{parsed.error}</p>}
    </>
  );
}
