// The lists: each with its exact member count, and a new one made here (names are unique in the workspace).
import { useState } from 'preact/hooks';
import { api, unwrap, unwrapList } from '../../api';
import { hasRole, identity } from '../../session';
import { ErrorNotice, Field, Form, Submit, useAction } from '../../ui/form';
import { Loading, useLoad } from '../../ui/load';
import { TableWrap } from '../settings/nav';
import { AudiencePage, counted } from './nav';

function NewList(props: { onAdded: () => void }) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const add = useAction(async () => {
    await unwrap(api.POST('/lists', { body: { name: name.trim(), ...(description.trim() ? { description: description.trim() } : {}) } }));
    setName('');
    setDescription('');
    props.onAdded();
  });
  return (
    <section class="card" aria-labelledby="new-list-heading">
      <h2 id="new-list-heading">New list</h2>
      <ErrorNotice error={add.error} />
      <Form onSubmit={add.run} label="New list">
        <Field label="Name" name="name" value={name} onInput={setName} error={add.fieldError('name')} required />
        <Field label="Description" name="description" value={description} onInput={setDescription} hint="Optional." />
        <Submit busy={add.busy}>Add list</Submit>
      </Form>
    </section>
  );
}

export default function Lists() {
  const load = useLoad(() => unwrapList(api.GET('/lists', { params: { query: { limit: 200 } } })), []);
  return (
    <AudiencePage title="Lists" lead="Lists are who a campaign goes to. Add members through the API, an import, or a contact's page.">
      <section class="card" aria-labelledby="lists-heading">
        <h2 id="lists-heading" class="visually-hidden">
          Lists
        </h2>
        <Loading state={load} what="lists">
          {(page) =>
            page.items.length === 0 ? (
              <p>No lists yet.</p>
            ) : (
              <TableWrap label="Lists">
                <table data-testid="lists">
                  <caption class="visually-hidden">Lists ({page.total})</caption>
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col" class="num">
                        Members
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {page.items.map((l) => (
                      <tr key={l.id} data-testid="list-row">
                        <td>
                          <a href={`/app/audiences/lists/${l.id}`}>{l.name}</a>
                          {l.description && <p class="hint">{l.description}</p>}
                        </td>
                        <td class="num">{counted(l.member_count, 'member', 'members')}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableWrap>
            )
          }
        </Loading>
      </section>
      {hasRole(identity.value, 'developer') && <NewList onAdded={() => void load.reload()} />}
    </AudiencePage>
  );
}
