// The segments: rule sets over contacts, evaluated when a campaign is sent. Counting one runs its query, so it is
// done on request rather than for every row.
import { useState } from 'preact/hooks';
import { api, unwrap, unwrapList } from '../../api';
import { hasRole, identity } from '../../session';
import { messageOf } from '../../ui/form';
import { Loading, useLoad } from '../../ui/load';
import { TableWrap, when } from '../settings/nav';
import { AudiencePage, counted } from './nav';

function CountButton(props: { id: string; name: string }) {
  const [words, setWords] = useState<string | undefined>(undefined);
  const count = async () => {
    setWords('Counting…');
    try {
      setWords(counted((await unwrap(api.GET('/segments/{id}/count', { params: { path: { id: props.id } } }))).count, 'contact', 'contacts'));
    } catch (err) {
      setWords(messageOf(err));
    }
  };
  return words ? (
    <span role="status">{words}</span>
  ) : (
    <button type="button" class="link" onClick={() => void count()} aria-label={`Count ${props.name}`}>
      Count
    </button>
  );
}

export default function Segments() {
  const load = useLoad(() => unwrapList(api.GET('/segments', { params: { query: { limit: 200 } } })), []);
  return (
    <AudiencePage title="Segments" lead="Contacts chosen by rules on their fields, lists and engagement, as they are when a campaign is sent.">
      {hasRole(identity.value, 'developer') && (
        <p>
          <a class="button" href="/app/audiences/segments/new">
            New segment
          </a>
        </p>
      )}
      <section class="card" aria-labelledby="segments-heading">
        <h2 id="segments-heading" class="visually-hidden">
          Segments
        </h2>
        <Loading state={load} what="segments">
          {(page) =>
            page.items.length === 0 ? (
              <p>No segments yet.</p>
            ) : (
              <TableWrap label="Segments">
                <table data-testid="segments">
                  <caption class="visually-hidden">Segments</caption>
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col">Contacts</th>
                      <th scope="col">Changed</th>
                    </tr>
                  </thead>
                  <tbody>
                    {page.items.map((s) => (
                      <tr key={s.id} data-testid="segment-row">
                        <td>
                          <a href={`/app/audiences/segments/${s.id}`}>{s.name}</a>
                        </td>
                        <td>
                          <CountButton id={s.id} name={s.name} />
                        </td>
                        <td class="nowrap">{when(s.updated_at)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableWrap>
            )
          }
        </Loading>
      </section>
    </AudiencePage>
  );
}
