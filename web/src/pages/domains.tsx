// The workspace's sending domains: each with its status, and a form to add one (then its page shows the records).
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso/router';
import type { Page } from '../api';
import { addDomain, listDomains, type Domain } from '../domains';
import { hasRole, identity } from '../session';
import { DomainStatus } from '../ui/dns-records';
import { ErrorNotice, Field, Form, Submit, useAction } from '../ui/form';
import { useTitle } from '../ui/layout';
import { useLoad } from '../ui/load';

/** The add-a-domain form, shared with onboarding: it answers the new domain to the caller. */
export function AddDomainForm(props: { onAdded: (d: Domain) => void }) {
  const [name, setName] = useState('');
  const add = useAction(async () => {
    props.onAdded(await addDomain(name));
    setName('');
  });
  return (
    <>
      <ErrorNotice error={add.error} />
      <Form onSubmit={add.run} label="Add a sending domain">
        <Field
          label="Domain name"
          name="domain"
          value={name}
          onInput={setName}
          placeholder="mail.example.com"
          spellcheck={false}
          hint="The domain your From addresses use; a subdomain such as mail.example.com keeps its reputation apart. In dev mode, any name under .localhost."
          error={add.fieldError('name')}
          required
        />
        <Submit busy={add.busy}>Add domain</Submit>
      </Form>
    </>
  );
}

export default function Domains() {
  useTitle('Domains');
  const { route } = useLocation();
  const [page, setPage] = useState<Page<Domain> | undefined>(undefined);
  // The cursor of the last page asked for: each page is added below the ones shown.
  const [after, setAfter] = useState<string | undefined>(undefined);
  const load = useLoad(
    () => listDomains(50, after),
    [after],
    (next) => setPage((prev) => (after && prev ? { ...next, items: [...prev.items, ...next.items] } : next)),
  );
  const canWrite = hasRole(identity.value, 'developer');
  return (
    <>
      <h1>Domains</h1>
      <p class="muted">Mail is sent from a domain once its SPF, DKIM and DMARC records are published and verified.</p>
      <ErrorNotice error={load.error} />
      {!page && !load.error && <p class="muted">Loading domains…</p>}
      {page && page.items.length === 0 && <p>No domains yet. Add the one your mail comes from.</p>}
      {page && page.items.length > 0 && (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Sending domains ({page.total})</caption>
            <thead>
              <tr>
                <th scope="col">Domain</th>
                <th scope="col">Status</th>
                <th scope="col">Records verified</th>
                <th scope="col">Last checked</th>
              </tr>
            </thead>
            <tbody>
              {page.items.map((d) => (
                <tr key={d.id}>
                  <td>
                    <a href={`/app/domains/${d.id}`}>{d.unicode_name}</a>
                  </td>
                  <td>
                    <DomainStatus status={d.status} />
                  </td>
                  <td class="num">
                    {d.records.filter((r) => r.verified).length} of {d.records.length}
                  </td>
                  <td>{d.last_checked_at ? new Date(d.last_checked_at).toLocaleString() : 'never'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {page?.next_cursor && (
        <button type="button" class="secondary" onClick={() => setAfter(page.next_cursor!)} disabled={load.loading}>
          Show more domains
        </button>
      )}
      {canWrite && (
        <section class="card" aria-labelledby="add-domain-heading">
          <h2 id="add-domain-heading">Add a domain</h2>
          <AddDomainForm onAdded={(d) => route(`/app/domains/${d.id}`)} />
        </section>
      )}
    </>
  );
}
