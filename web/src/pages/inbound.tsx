// Inbound mail: the inbound webhook, and the workspace mailboxes Mailpath keeps mail in (create one at a verified
// domain, pick one to list its messages, newest first, each opening in the reader (inbound-message.tsx) and
// downloadable as received).
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso/router';
import type { paths } from '../../../clients/typescript/index';
import { api, unwrap, unwrapList, type Page } from '../api';
import { hasRole, identity } from '../session';
import { ErrorNotice, Field, Form, Submit, useAction } from '../ui/form';
import { useTitle } from '../ui/layout';
import { useLoad } from '../ui/load';
import { size } from './inbound-message';
import { InboundWebhookSettings } from './inbound-webhook';

type Mailbox = paths['/mail/mailboxes/{id}']['get']['responses'][200]['content']['application/json']['data'];
type Message = paths['/mail/messages']['get']['responses'][200]['content']['application/json']['data'][number];

/** One mailbox's messages (keyed by the mailbox where it is used: another mailbox starts with nothing shown). */
function Messages(props: { mailbox: Mailbox }) {
  const [page, setPage] = useState<Page<Message> | undefined>(undefined);
  // The cursor of the last page asked for: each page is added below the ones shown.
  const [after, setAfter] = useState<string | undefined>(undefined);
  const load = useLoad(
    () => unwrapList(api.GET('/mail/messages', { params: { query: { mailbox_id: props.mailbox.id, limit: 50, ...(after ? { after } : {}) } } })),
    [after],
    (next) => setPage((prev) => (after && prev ? { ...next, items: [...prev.items, ...next.items] } : next)),
  );
  const refresh = () => (after ? setAfter(undefined) : void load.reload());
  return (
    <section class="card" aria-labelledby="messages-heading">
      <div class="page-head">
        <h2 id="messages-heading">Messages to {props.mailbox.address}</h2>
        <button type="button" class="secondary" onClick={refresh} disabled={load.loading}>
          Refresh
        </button>
      </div>
      <ErrorNotice error={load.error} />
      {!page && !load.error && <p class="muted">Loading messages…</p>}
      {page && page.items.length === 0 && <p>No messages yet. Mail sent to {props.mailbox.address} shows here.</p>}
      {page && page.items.length > 0 && (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">
              Messages to {props.mailbox.address} ({page.total})
            </caption>
            <thead>
              <tr>
                <th scope="col">From</th>
                <th scope="col">Subject</th>
                <th scope="col">Received</th>
                <th scope="col" class="num">
                  Size
                </th>
                <th scope="col">Download</th>
              </tr>
            </thead>
            <tbody>
              {page.items.map((m) => (
                <tr key={m.id} class={m.seen ? '' : 'unread'}>
                  <td>{m.from ?? '—'}</td>
                  <td>
                    <a href={`/app/inbound/${props.mailbox.id}/${m.id}`}>{m.subject ?? '(no subject)'}</a>
                    {!m.seen && <span class="badge">unread</span>}
                  </td>
                  <td>{new Date(m.received_at).toLocaleString()}</td>
                  <td class="num">{size(m.size_bytes)}</td>
                  <td>
                    <a href={`/api/v1/mail/messages/${m.id}/raw`} download={`${m.id}.eml`}>
                      .eml<span class="visually-hidden"> of {m.subject ?? 'the message'}</span>
                    </a>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {page?.next_cursor && (
        <button type="button" class="secondary" onClick={() => setAfter(page.next_cursor!)} disabled={load.loading}>
          Show older messages
        </button>
      )}
    </section>
  );
}

function AddMailbox(props: { onAdded: (m: Mailbox) => void }) {
  const [address, setAddress] = useState('');
  const [name, setName] = useState('');
  const add = useAction(async () => {
    const body = { address: address.trim(), ...(name.trim() ? { display_name: name.trim() } : {}) };
    props.onAdded(await unwrap(api.POST('/mail/mailboxes', { body })));
    setAddress('');
    setName('');
  });
  return (
    <>
      <ErrorNotice error={add.error} />
      <Form onSubmit={add.run} label="Create a mailbox">
        <div class="field-row">
          <Field
            label="Address"
            name="address"
            type="email"
            value={address}
            onInput={setAddress}
            placeholder="support@mail.example.com"
            hint="At one of your verified domains."
            error={add.fieldError('address')}
            required
          />
          <Field label="Display name" name="display_name" value={name} onInput={setName} placeholder="Support" />
        </div>
        <Submit busy={add.busy}>Create mailbox</Submit>
      </Form>
    </>
  );
}

export default function Inbound() {
  useTitle('Inbound');
  const { query, route } = useLocation();
  const load = useLoad(() => unwrapList(api.GET('/mail/mailboxes', { params: { query: { limit: 200 } } })), []);
  const page = load.data;
  const canWrite = hasRole(identity.value, 'developer');
  // The open mailbox is in the address (?mailbox=), so it survives a reload and can be linked to.
  const open = page?.items.find((m) => m.id === query['mailbox']);
  return (
    <>
      <h1>Inbound</h1>
      <InboundWebhookSettings canWrite={canWrite} />
      <section class="card" aria-labelledby="mailboxes-heading">
        <h2 id="mailboxes-heading">Mailboxes</h2>
        <p class="muted">Mailpath keeps mail sent to these addresses; read it here or through /mail/messages.</p>
        <ErrorNotice error={load.error} />
        {!page && !load.error && <p class="muted">Loading mailboxes…</p>}
        {page && page.items.length === 0 && <p>No mailboxes yet.</p>}
        {page && page.items.length > 0 && (
          <div class="table-wrap">
            <table>
              <caption class="visually-hidden">Mailboxes ({page.total})</caption>
              <thead>
                <tr>
                  <th scope="col">Address</th>
                  <th scope="col">Name</th>
                  <th scope="col">Reader signed up</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {page.items.map((m) => (
                  <tr key={m.id}>
                    <td>
                      <a href={`/app/inbound?mailbox=${m.id}`} aria-current={m.id === open?.id ? 'true' : undefined}>
                        {m.address}
                      </a>
                    </td>
                    <td>{m.display_name ?? '—'}</td>
                    <td>{m.password_set ? 'Yes' : 'Not yet'}</td>
                    <td>{new Date(m.created_at).toLocaleDateString()}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {canWrite && (
          <AddMailbox
            onAdded={(m) => {
              void load.reload();
              route(`/app/inbound?mailbox=${m.id}`);
            }}
          />
        )}
      </section>
      {open && <Messages key={open.id} mailbox={open} />}
    </>
  );
}
