// One list: its members in the order they joined, a page at a time (the API's cursor), adding members by address,
// and deleting the list (its contacts stay).
import { useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso/router';
import { api, unwrap, unwrapList } from '../../api';
import { hasRole, identity } from '../../session';
import { ConfirmButton } from '../../ui/confirm';
import { addressesIn, ErrorNotice, Field, Form, Notice, Submit, useAction } from '../../ui/form';
import { Loading, useLoad } from '../../ui/load';
import { CursorPager, useCursorPages } from '../../ui/pager';
import { TableWrap } from '../settings/nav';
import { ContactStatus } from './contacts';
import { AudiencePage, counted } from './nav';

const PAGE_SIZE = 50;

function Members(props: { id: string; version: number }) {
  const pages = useCursorPages();
  const { after } = pages;
  const load = useLoad(
    () => unwrapList(api.GET('/lists/{id}/members', { params: { path: { id: props.id }, query: { limit: PAGE_SIZE, ...(after ? { after } : {}) } } })),
    [props.id, after, props.version],
  );
  return (
    <Loading state={load} what="members">
      {(page) => (
        <>
          <p role="status" data-testid="member-count">
            {counted(page.total, 'member', 'members')}
            {page.total > PAGE_SIZE ? `; page ${pages.number}` : ''}
          </p>
          {page.items.length > 0 && (
            <TableWrap label="Members">
              <table data-testid="members">
                <caption class="visually-hidden">Members, in the order they joined</caption>
                <thead>
                  <tr>
                    <th scope="col">Address</th>
                    <th scope="col">Name</th>
                    <th scope="col">Status</th>
                  </tr>
                </thead>
                <tbody>
                  {page.items.map((m) => (
                    <tr key={m.id} data-testid="member-row">
                      <td class="break">
                        <a href={`/app/audiences/contacts/${m.id}`}>{m.email ?? '(erased)'}</a>
                      </td>
                      <td>{[m.first_name, m.last_name].filter(Boolean).join(' ') || '—'}</td>
                      <td>
                        <ContactStatus status={m.status} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableWrap>
          )}
          <CursorPager label="Pages of members" pages={pages} next={page.next_cursor} loading={load.loading} />
        </>
      )}
    </Loading>
  );
}

function AddMembers(props: { id: string; onAdded: () => void }) {
  const [text, setText] = useState('');
  const [result, setResult] = useState<string | undefined>(undefined);
  const add = useAction(async () => {
    const emails = addressesIn(text);
    const answer = await unwrap(api.POST('/lists/{id}/members/batch', { params: { path: { id: props.id } }, body: { emails } }));
    setResult(
      Object.entries(answer.totals)
        .filter(([, n]) => n > 0)
        .map(([status, n]) => `${n} ${status.replace('_', ' ')}`)
        .join(', '),
    );
    setText('');
    props.onAdded();
  });
  return (
    <section class="card" aria-labelledby="add-members-heading">
      <h2 id="add-members-heading">Add members</h2>
      <ErrorNotice error={add.error} />
      <div aria-live="polite">
        {result && (
          <Notice kind="done" title="Added">
            {result}
          </Notice>
        )}
      </div>
      <Form onSubmit={add.run} label="Add members">
        <Field
          label="Addresses of contacts"
          name="emails"
          value={text}
          onInput={setText}
          hint="Separated by spaces or commas; each must be a contact already."
        />
        <Submit busy={add.busy}>Add to list</Submit>
      </Form>
    </section>
  );
}

export default function List() {
  const { params } = useRoute();
  const { route } = useLocation();
  const id = params['id']!;
  const [version, setVersion] = useState(0);
  const load = useLoad(() => unwrap(api.GET('/lists/{id}', { params: { path: { id } } })), [id, version]);
  const remove = useAction(async () => {
    await unwrap(api.DELETE('/lists/{id}', { params: { path: { id } } }));
    route('/app/audiences/lists');
  });
  const canWrite = hasRole(identity.value, 'developer');
  return (
    <AudiencePage title={load.data?.name ?? 'List'} lead={load.data?.description ?? undefined}>
      <Loading state={load} what="the list">
        {() => (
          <>
            <section class="card" aria-labelledby="members-heading">
              <h2 id="members-heading">Members</h2>
              <Members id={id} version={version} />
            </section>
            {canWrite && <AddMembers id={id} onAdded={() => setVersion((v) => v + 1)} />}
            {canWrite && (
              <section class="card" aria-labelledby="delete-heading">
                <h2 id="delete-heading">Delete</h2>
                <ErrorNotice error={remove.error} />
                <ConfirmButton label="Delete list" title="Delete this list?" onConfirm={() => void remove.run()} busy={remove.busy}>
                  The list goes; its contacts stay, as do other lists.
                </ConfirmButton>
              </section>
            )}
          </>
        )}
      </Loading>
    </AudiencePage>
  );
}
