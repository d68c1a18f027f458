// The templates: every one by name with its subject and which bodies it has, newest first, searched by name.
import { useState } from 'preact/hooks';
import { api, unwrapList } from '../../api';
import { hasRole, identity } from '../../session';
import { Field, Form } from '../../ui/form';
import { useTitle } from '../../ui/layout';
import { Loading, useLoad } from '../../ui/load';
import { TableWrap, when } from '../settings/nav';

export default function Templates() {
  useTitle('Templates');
  const [text, setText] = useState('');
  const [q, setQ] = useState('');
  const load = useLoad(() => unwrapList(api.GET('/templates', { params: { query: { limit: 200, ...(q ? { q } : {}) } } })), [q]);
  return (
    <>
      <div class="page-head">
        <h1>Templates</h1>
        {hasRole(identity.value, 'developer') && (
          <a class="button" href="/app/templates/new">
            New template
          </a>
        )}
      </div>
      <p class="muted lead">Subjects and bodies in Liquid, rendered for each recipient by transactional sends and campaigns.</p>
      <section class="card" aria-labelledby="templates-heading">
        <h2 id="templates-heading" class="visually-hidden">
          Templates
        </h2>
        <Form onSubmit={() => setQ(text.trim())} label="Search templates">
          <div class="search-row">
            <Field label="Name contains" name="q" type="search" value={text} onInput={setText} />
            <button type="submit">Search</button>
          </div>
        </Form>
        <Loading state={load} what="templates">
          {(page) =>
            page.items.length === 0 ? (
              <p>{q ? 'No template matches this name.' : 'No templates yet.'}</p>
            ) : (
              <TableWrap label="Templates">
                <table data-testid="templates">
                  <caption class="visually-hidden">Templates, newest first</caption>
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col">Subject</th>
                      <th scope="col">Bodies</th>
                      <th scope="col">Changed</th>
                    </tr>
                  </thead>
                  <tbody>
                    {page.items.map((tpl) => (
                      <tr key={tpl.id} data-testid="template-row">
                        <td>
                          <a href={`/app/templates/${tpl.id}`}>{tpl.name}</a>
                        </td>
                        <td class="mono break">{tpl.subject}</td>
                        <td>{[tpl.has_body_html && 'HTML', tpl.has_body_text && 'text'].filter(Boolean).join(', ')}</td>
                        <td class="nowrap">{when(tpl.updated_at)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableWrap>
            )
          }
        </Loading>
      </section>
    </>
  );
}
