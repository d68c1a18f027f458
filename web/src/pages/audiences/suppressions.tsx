// The suppression list: every address mail is never sent to, why and by what, searched and filtered by reason a page
// at a time; addresses added one or many at once (each one's outcome said), and an entry lifted behind a confirmation.
import { useState } from 'preact/hooks';
import type { paths } from '../../../../clients/typescript/index';
import { api, unwrap, unwrapList } from '../../api';
import { hasRole, identity } from '../../session';
import { ConfirmButton } from '../../ui/confirm';
import { addressesIn, ErrorNotice, Field, Form, Notice, Submit, useAction } from '../../ui/form';
import { Loading, useLoad } from '../../ui/load';
import { CursorPager, useCursorPages } from '../../ui/pager';
import { TableWrap, when } from '../settings/nav';
import { everyOf } from '../../ui/enums';
import { AudiencePage, counted } from './nav';

const PAGE_SIZE = 50;
type Reason = NonNullable<NonNullable<paths['/suppressions']['get']['parameters']['query']>['reason']>;
const REASONS = everyOf<Reason>()(['hard_bounce', 'complaint', 'unsubscribe', 'manual', 'spam_trap', 'erased']);

function AddSuppressions(props: { onAdded: () => void }) {
  const [text, setText] = useState('');
  const [result, setResult] = useState<string | undefined>(undefined);
  const add = useAction(async () => {
    const emails = addressesIn(text);
    if (emails.length === 0) throw new Error('Give at least one address.');
    const answer = await unwrap(api.POST('/suppressions/bulk', { body: { emails, reason: 'manual' } }));
    const { added, already_suppressed, invalid } = answer.totals;
    setResult(`${added} added, ${already_suppressed} already suppressed, ${invalid} invalid`);
    setText('');
    props.onAdded();
  });
  return (
    <section class="card" aria-labelledby="add-suppressions-heading">
      <h2 id="add-suppressions-heading">Suppress addresses</h2>
      <ErrorNotice error={add.error} />
      <div aria-live="polite">
        {result && (
          <Notice kind="done" title="Done">
            {result}
          </Notice>
        )}
      </div>
      <Form onSubmit={add.run} label="Suppress addresses">
        <Field
          label="Addresses to suppress"
          name="emails"
          value={text}
          onInput={setText}
          hint="One or many, separated by spaces or commas; mail to them is dropped from now on."
        />
        <Submit busy={add.busy}>Suppress</Submit>
      </Form>
    </section>
  );
}

export default function Suppressions() {
  const [text, setText] = useState('');
  const [q, setQ] = useState('');
  const [reason, setReason] = useState<Reason | ''>('');
  const pages = useCursorPages();
  const { after } = pages;
  const load = useLoad(
    () =>
      unwrapList(
        api.GET('/suppressions', { params: { query: { limit: PAGE_SIZE, ...(q ? { q } : {}), ...(reason ? { reason } : {}), ...(after ? { after } : {}) } } }),
      ),
    [q, reason, after],
  );
  const lift = useAction(async (id: string) => {
    await unwrap(api.DELETE('/suppressions/{id}', { params: { path: { id } } }));
    await load.reload();
  });
  const canWrite = hasRole(identity.value, 'developer');
  const search = (next: { q?: string; reason?: Reason | '' }) => {
    pages.restart();
    if (next.q !== undefined) setQ(next.q);
    if (next.reason !== undefined) setReason(next.reason);
  };
  return (
    <AudiencePage title="Suppressions" lead="Addresses never mailed: hard bounces, complaints and unsubscribes are added by themselves; others by hand.">
      <section class="card" aria-labelledby="suppressions-heading">
        <h2 id="suppressions-heading" class="visually-hidden">
          Suppression list
        </h2>
        <Form onSubmit={() => search({ q: text.trim().toLowerCase() })} label="Search suppressions">
          <div class="search-row">
            <Field label="Address contains" name="q" type="search" value={text} onInput={setText} spellcheck={false} />
            <label class="field">
              <span class="label">Reason</span>
              <select value={reason} onChange={(e) => search({ reason: (e.currentTarget as HTMLSelectElement).value as Reason | '' })}>
                <option value="">Any reason</option>
                {REASONS.map((r) => (
                  <option key={r} value={r}>
                    {r.replace('_', ' ')}
                  </option>
                ))}
              </select>
            </label>
            <button type="submit">Search</button>
          </div>
        </Form>
        <ErrorNotice error={lift.error} />
        <Loading state={load} what="suppressions">
          {(page) => (
            <>
              <p role="status" data-testid="suppression-count">
                {counted(page.total, 'address', 'addresses')}
                {page.total > PAGE_SIZE ? `; page ${pages.number}` : ''}
              </p>
              {page.items.length > 0 && (
                <TableWrap label="Suppressions">
                  <table data-testid="suppressions">
                    <caption class="visually-hidden">Suppressed addresses, newest first</caption>
                    <thead>
                      <tr>
                        <th scope="col">Address</th>
                        <th scope="col">Reason</th>
                        <th scope="col">Added</th>
                        {canWrite && <th scope="col">Lift</th>}
                      </tr>
                    </thead>
                    <tbody>
                      {page.items.map((s) => (
                        <tr key={s.id} data-testid="suppression-row">
                          <td class="break">
                            {s.email ?? '(erased person)'}
                            {s.detail && <span class="hint block">{s.detail}</span>}
                          </td>
                          <td>
                            {s.reason.replace('_', ' ')} <span class="hint block">by {s.source.replaceAll('_', ' ')}</span>
                          </td>
                          <td class="nowrap">{when(s.created_at)}</td>
                          {canWrite && (
                            <td>
                              {s.email && (
                                <ConfirmButton
                                  label="Lift"
                                  ariaLabel={`Lift ${s.email}`}
                                  title={`Mail ${s.email} again?`}
                                  class="secondary"
                                  onConfirm={() => void lift.run(s.id)}
                                  busy={lift.busy}
                                >
                                  The address leaves the suppression list: sends and campaigns reach it again.
                                </ConfirmButton>
                              )}
                            </td>
                          )}
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </TableWrap>
              )}
              <CursorPager label="Pages of suppressions" pages={pages} next={page.next_cursor} loading={load.loading} />
            </>
          )}
        </Loading>
      </section>
      {canWrite && (
        <AddSuppressions
          onAdded={() => {
            pages.restart();
            void load.reload();
          }}
        />
      )}
    </AudiencePage>
  );
}
