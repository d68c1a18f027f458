// The campaigns, newest first, searched by name or subject: each with its status, why it waits, and how far it got.
import { useState } from 'preact/hooks';
import { api, unwrap } from '../../api';
import { hasRole, identity } from '../../session';
import { Field, Form } from '../../ui/form';
import { useTitle } from '../../ui/layout';
import { Loading, useLoad } from '../../ui/load';
import { TableWrap, when } from '../settings/nav';
import { CampaignStatus } from './status';

export default function Campaigns() {
  useTitle('Campaigns');
  const [text, setText] = useState('');
  const [q, setQ] = useState('');
  const load = useLoad(() => unwrap(api.GET('/campaigns', { params: { query: { limit: 100, ...(q ? { q } : {}) } } })), [q]);
  return (
    <>
      <div class="page-head">
        <h1>Campaigns</h1>
        {hasRole(identity.value, 'developer') && (
          <a class="button" href="/app/campaigns/new">
            New campaign
          </a>
        )}
      </div>
      <p class="muted lead">Mail to a list or a segment, through the same gates, warm-up and quota as every send.</p>
      <section class="card" aria-labelledby="campaigns-heading">
        <h2 id="campaigns-heading" class="visually-hidden">
          Campaigns
        </h2>
        <Form onSubmit={() => setQ(text.trim())} label="Search campaigns">
          <div class="search-row">
            <Field label="Name or subject contains" name="q" type="search" value={text} onInput={setText} />
            <button type="submit">Search</button>
          </div>
        </Form>
        <Loading state={load} what="campaigns">
          {(page) =>
            page.items.length === 0 ? (
              <p>{q ? 'No campaign matches this search.' : 'No campaigns yet.'}</p>
            ) : (
              <TableWrap label="Campaigns">
                <table data-testid="campaigns">
                  <caption class="visually-hidden">Campaigns, newest first ({page.total})</caption>
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col">Status</th>
                      <th scope="col" class="num">
                        Sent
                      </th>
                      <th scope="col">Created</th>
                    </tr>
                  </thead>
                  <tbody>
                    {page.items.map((c) => (
                      <tr key={c.id} data-testid="campaign-row">
                        <td>
                          <a href={`/app/campaigns/${c.id}`}>{c.name}</a>
                          {c.subject && <p class="hint">{c.subject}</p>}
                        </td>
                        <td>
                          <CampaignStatus campaign={c} />
                        </td>
                        <td class="num">
                          {c.progress.sent.toLocaleString()}
                          {c.progress.targeted > 0 && ` of ${c.progress.targeted.toLocaleString()}`}
                        </td>
                        <td class="nowrap">{when(c.created_at)}</td>
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
