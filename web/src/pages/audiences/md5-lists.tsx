// MD5 suppression lists: the hashed addresses advertisers hand out, a campaign attached to one skipping whoever is on it.
// Every list with its exact entry count a page at a time (the API's cursor), a new one made here, one deleted behind a
// confirmation.
import { useState } from 'preact/hooks';
import { api, unwrap, unwrapList } from '../../api';
import { hasRole, identity } from '../../session';
import { ConfirmButton } from '../../ui/confirm';
import { ErrorNotice, Field, Form, Submit, useAction } from '../../ui/form';
import { Loading, useLoad } from '../../ui/load';
import { CursorPager, useCursorPages } from '../../ui/pager';
import { TableWrap, when } from '../settings/nav';
import { AudiencePage, counted } from './nav';

const PAGE_SIZE = 50;

function NewMd5List(props: { onAdded: () => void }) {
  const [name, setName] = useState('');
  const add = useAction(async () => {
    await unwrap(api.POST('/md5-lists', { body: { name: name.trim() } }));
    setName('');
    props.onAdded();
  });
  return (
    <section class="card" aria-labelledby="new-md5-list-heading">
      <h2 id="new-md5-list-heading">New MD5 list</h2>
      <ErrorNotice error={add.error} />
      <Form onSubmit={add.run} label="New MD5 list">
        <Field label="Name" name="name" value={name} onInput={setName} error={add.fieldError('name')} hint="Such as the advertiser it came from." required />
        <Submit busy={add.busy}>Add MD5 list</Submit>
      </Form>
    </section>
  );
}

export default function Md5Lists() {
  const pages = useCursorPages();
  const { after } = pages;
  const load = useLoad(() => unwrapList(api.GET('/md5-lists', { params: { query: { limit: PAGE_SIZE, ...(after ? { after } : {}) } } })), [after]);
  const remove = useAction(async (id: string) => {
    await unwrap(api.DELETE('/md5-lists/{id}', { params: { path: { id } } }));
    await load.reload();
  });
  const canWrite = hasRole(identity.value, 'developer');
  return (
    <AudiencePage
      title="MD5 lists"
      lead="Suppression files of hashed addresses (MD5 of the lower-cased address). A campaign attached to one skips everyone on it."
    >
      <section class="card" aria-labelledby="md5-lists-heading">
        <h2 id="md5-lists-heading" class="visually-hidden">
          MD5 lists
        </h2>
        <ErrorNotice error={remove.error} />
        <Loading state={load} what="MD5 lists">
          {(page) => (
            <>
              <p role="status" data-testid="md5-list-count">
                {counted(page.total, 'list', 'lists')}
                {page.total > PAGE_SIZE ? `; page ${pages.number}` : ''}
              </p>
              {page.items.length > 0 && (
                <TableWrap label="MD5 lists">
                  <table data-testid="md5-lists">
                    <caption class="visually-hidden">MD5 lists, newest first</caption>
                    <thead>
                      <tr>
                        <th scope="col">Name</th>
                        <th scope="col" class="num">
                          Entries
                        </th>
                        <th scope="col">Created</th>
                        {canWrite && <th scope="col">Delete</th>}
                      </tr>
                    </thead>
                    <tbody>
                      {page.items.map((l) => (
                        <tr key={l.id} data-testid="md5-list-row">
                          <td>
                            <a href={`/app/audiences/md5-lists/${l.id}`}>{l.name}</a>
                          </td>
                          <td class="num">{counted(l.entry_count, 'hash', 'hashes')}</td>
                          <td class="nowrap">{when(l.created_at)}</td>
                          {canWrite && (
                            <td>
                              <ConfirmButton
                                label="Delete"
                                ariaLabel={`Delete ${l.name}`}
                                title={`Delete the MD5 list ${l.name}?`}
                                class="secondary"
                                onConfirm={() => void remove.run(l.id)}
                                busy={remove.busy}
                              >
                                The list and its hashes go for good; campaigns not yet sent that use it no longer skip anyone by it.
                              </ConfirmButton>
                            </td>
                          )}
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </TableWrap>
              )}
              <CursorPager label="Pages of MD5 lists" pages={pages} next={page.next_cursor} loading={load.loading} />
            </>
          )}
        </Loading>
      </section>
      {canWrite && (
        <NewMd5List
          onAdded={() => {
            pages.restart();
            void load.reload();
          }}
        />
      )}
    </AudiencePage>
  );
}
