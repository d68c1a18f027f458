// A contact's lists (GET /contacts/{id}/lists), a page at a time in the order it joined them, each linked to its list;
// adding the contact to a list and taking it out of one go through the list-membership routes, so their audit and
// member counts apply as they do on the list's own page.
import { useState } from 'preact/hooks';
import { api, unwrap, unwrapList } from '../../api';
import { ErrorNotice, Form, Notice, Submit, useAction } from '../../ui/form';
import { Loading, useLoad } from '../../ui/load';
import { CursorPager, useCursorPages } from '../../ui/pager';
import { TableWrap, when } from '../settings/nav';
import { counted } from './nav';

const PAGE_SIZE = 50;

function AddToList(props: { contactId: string; onDone: (message: string) => void }) {
  // The pickers' convention (imports, campaigns): the account's 200 newest lists.
  const lists = useLoad(() => unwrapList(api.GET('/lists', { params: { query: { limit: 200 } } })), []);
  const [listId, setListId] = useState('');
  const add = useAction(async () => {
    const list = lists.data?.items.find((l) => l.id === listId);
    if (!list) throw new Error('Choose a list first.');
    const answer = await unwrap(api.PUT('/lists/{id}/members/{contactID}', { params: { path: { id: list.id, contactID: props.contactId } } }));
    setListId('');
    props.onDone(answer.already_member ? `Already in ${list.name}.` : `Added to ${list.name}.`);
  });
  return (
    <Form onSubmit={add.run} label="Add to a list">
      <ErrorNotice error={add.error ?? lists.error} />
      <div class="field">
        <label for="contact-add-list">List to add the contact to</label>
        <select id="contact-add-list" value={listId} onChange={(e) => setListId((e.currentTarget as HTMLSelectElement).value)}>
          <option value="">Choose a list</option>
          {lists.data?.items.map((l) => (
            <option key={l.id} value={l.id}>
              {l.name}
            </option>
          ))}
        </select>
      </div>
      <Submit busy={add.busy}>Add to list</Submit>
    </Form>
  );
}

/** `canAdd`: the user may change lists and the contact can join one (a deleted contact cannot: the API answers 409). */
export function ContactLists(props: { contactId: string; canChange: boolean; canAdd: boolean }) {
  const pages = useCursorPages();
  const { after } = pages;
  const [version, setVersion] = useState(0);
  const [done, setDone] = useState<string | undefined>(undefined);
  const load = useLoad(
    () => unwrapList(api.GET('/contacts/{id}/lists', { params: { path: { id: props.contactId }, query: { limit: PAGE_SIZE, ...(after ? { after } : {}) } } })),
    [props.contactId, after, version],
  );
  const changed = (message: string) => {
    setDone(message);
    setVersion((v) => v + 1);
  };
  const remove = useAction(async (list: { id: string; name: string }) => {
    await unwrap(api.DELETE('/lists/{id}/members/{contactID}', { params: { path: { id: list.id, contactID: props.contactId } } }));
    changed(`Removed from ${list.name}.`);
  });
  return (
    <section class="card" aria-labelledby="lists-heading">
      <h2 id="lists-heading">Lists</h2>
      <div aria-live="polite">{done && <Notice kind="done" title={done} />}</div>
      <ErrorNotice error={remove.error} />
      <Loading state={load} what="the lists">
        {(page) => (
          <>
            <p role="status" data-testid="contact-list-count">
              {page.total === 0 ? 'In no list.' : `In ${counted(page.total, 'list', 'lists')}`}
              {page.total > PAGE_SIZE ? `; page ${pages.number}` : ''}
            </p>
            {page.items.length > 0 && (
              <TableWrap label="Lists of this contact">
                <table data-testid="contact-lists">
                  <caption class="visually-hidden">Lists, in the order the contact joined them</caption>
                  <thead>
                    <tr>
                      <th scope="col">List</th>
                      <th scope="col">Added</th>
                      {props.canChange && <th scope="col">Change</th>}
                    </tr>
                  </thead>
                  <tbody>
                    {page.items.map((l) => (
                      <tr key={l.id} data-testid="contact-list-row">
                        <td class="break">
                          <a href={`/app/audiences/lists/${l.id}`}>{l.name}</a>
                        </td>
                        <td>{when(l.added_at)}</td>
                        {props.canChange && (
                          <td>
                            <button
                              type="button"
                              class="secondary small"
                              disabled={remove.busy}
                              onClick={() => void remove.run(l)}
                              aria-label={`Remove from ${l.name}`}
                            >
                              Remove
                            </button>
                          </td>
                        )}
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableWrap>
            )}
            {(page.total > PAGE_SIZE || pages.number > 1) && (
              <CursorPager label="Pages of lists" pages={pages} next={page.next_cursor} loading={load.loading} />
            )}
          </>
        )}
      </Loading>
      {props.canChange && props.canAdd && <AddToList contactId={props.contactId} onDone={changed} />}
    </section>
  );
}
