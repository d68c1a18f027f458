// The contacts: searched by address, filtered by status, a page of 50 at a time. The total comes from the API's
// per-status counters (a search's is counted up to a cap), so a page costs the same at a million contacts as at ten.
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso/router';
import { api, unwrap } from '../../api';
import { Field, Form } from '../../ui/form';
import { Loading, useLoad } from '../../ui/load';
import { TableWrap, when } from '../settings/nav';
import { AudiencePage, counted } from './nav';

const PAGE_SIZE = 50;
type StatusFilter = 'default' | 'active' | 'unsubscribed' | 'deleted' | 'all';

const STATUS_CHOICES: { value: StatusFilter; label: string }[] = [
  { value: 'default', label: 'Active and unsubscribed' },
  { value: 'active', label: 'Active' },
  { value: 'unsubscribed', label: 'Unsubscribed' },
  { value: 'deleted', label: 'Deleted' },
  { value: 'all', label: 'All' },
];

export function ContactStatus(props: { status: string }) {
  const tone = props.status === 'active' ? 'ok' : props.status === 'unsubscribed' ? 'warning' : '';
  return <span class={`badge ${tone}`}>{props.status}</span>;
}

function ContactTable(props: { q: string; status: StatusFilter; offset: number; onPage: (offset: number) => void }) {
  const load = useLoad(
    () =>
      unwrap(
        api.GET('/contacts', {
          params: {
            query: {
              limit: PAGE_SIZE,
              offset: props.offset,
              ...(props.q ? { q: props.q } : {}),
              ...(props.status === 'default' ? {} : { status: props.status }),
            },
          },
        }),
      ),
    [props.q, props.status, props.offset],
  );
  return (
    <Loading state={load} what="contacts">
      {(page) => {
        const last = Math.min(page.offset + page.items.length, page.total);
        return (
          <>
            <p role="status" data-testid="contact-count">
              {counted(page.total, 'contact', 'contacts')}
              {page.total_is_capped ? ' or more' : ''}
              {props.q ? ' match' : ''}
              {page.items.length > 0 && page.total > PAGE_SIZE ? `; showing ${(page.offset + 1).toLocaleString()}–${last.toLocaleString()}` : ''}
            </p>
            {page.items.length === 0 ? (
              <p>{props.q ? 'No contact matches this search.' : 'No contacts yet: add them through the API or import a file.'}</p>
            ) : (
              <TableWrap label="Contacts">
                <table data-testid="contacts" aria-busy={load.loading ? 'true' : undefined}>
                  <caption class="visually-hidden">Contacts, newest first</caption>
                  <thead>
                    <tr>
                      <th scope="col">Address</th>
                      <th scope="col">Name</th>
                      <th scope="col">Status</th>
                      <th scope="col">Added</th>
                    </tr>
                  </thead>
                  <tbody>
                    {page.items.map((c) => (
                      <tr key={c.id} data-testid="contact-row">
                        <td class="break">
                          <a href={`/app/audiences/contacts/${c.id}`}>{c.email ?? '(erased)'}</a>
                        </td>
                        <td>{[c.first_name, c.last_name].filter(Boolean).join(' ') || '—'}</td>
                        <td>
                          <ContactStatus status={c.status} />
                        </td>
                        <td class="nowrap">{when(c.created_at)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableWrap>
            )}
            <nav class="pager" aria-label="Pages of contacts">
              <button
                type="button"
                class="secondary"
                disabled={page.offset === 0 || load.loading}
                onClick={() => props.onPage(Math.max(0, page.offset - PAGE_SIZE))}
              >
                Previous page
              </button>
              <button type="button" class="secondary" disabled={last >= page.total || load.loading} onClick={() => props.onPage(page.offset + PAGE_SIZE)}>
                Next page
              </button>
            </nav>
          </>
        );
      }}
    </Loading>
  );
}

export default function Contacts() {
  const { query, url, route } = useLocation();
  const q = query['q'] ?? '';
  const status = (STATUS_CHOICES.some((c) => c.value === query['status']) ? query['status'] : 'default') as StatusFilter;
  const offset = Math.max(0, Number(query['offset']) || 0);
  const [text, setText] = useState(q);
  // The search, filter and page live in the address: a reload or a shared link shows the same page.
  const go = (next: { q?: string; status?: StatusFilter; offset?: number }) => {
    const params = new URLSearchParams();
    const nq = next.q ?? q;
    const ns = next.status ?? status;
    const no = next.offset ?? 0;
    if (nq) params.set('q', nq);
    if (ns !== 'default') params.set('status', ns);
    if (no) params.set('offset', String(no));
    const target = `/app/audiences/contacts${params.size ? `?${params}` : ''}`;
    if (target !== url) route(target);
  };
  return (
    <AudiencePage title="Contacts" lead="Everyone this workspace can mail. Search by address; open a contact for its fields, lists and history.">
      <section class="card" aria-labelledby="contacts-heading">
        <h2 id="contacts-heading" class="visually-hidden">
          Contact list
        </h2>
        <Form onSubmit={() => go({ q: text.trim().toLowerCase() })} label="Search contacts">
          <div class="search-row">
            <Field label="Address contains" name="q" type="search" value={text} onInput={setText} spellcheck={false} />
            <label class="field">
              <span class="label">Status</span>
              <select value={status} onChange={(e) => go({ status: (e.currentTarget as HTMLSelectElement).value as StatusFilter })}>
                {STATUS_CHOICES.map((c) => (
                  <option key={c.value} value={c.value}>
                    {c.label}
                  </option>
                ))}
              </select>
            </label>
            <button type="submit">Search</button>
          </div>
        </Form>
        <ContactTable q={q} status={status} offset={offset} onPage={(o) => go({ offset: o })} />
      </section>
    </AudiencePage>
  );
}
