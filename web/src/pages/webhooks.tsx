// Event webhooks: the endpoints Mailpath POSTs delivery and engagement events to (each links to its delivery log),
// adding one (its signing secret shown once), and the dead letters of every endpoint, each replayable.
import { useState } from 'preact/hooks';
import { api, unwrap, unwrapList, type Page } from '../api';
import { hasRole, identity } from '../session';
import { SecretOnce } from '../ui/copy';
import { ErrorNotice, Field, Form, Notice, Submit, useAction } from '../ui/form';
import { useTitle } from '../ui/layout';
import { useLoad } from '../ui/load';
import { DeliveryTable, type Delivery, type Endpoint } from '../ui/deliveries';

type EventType = Endpoint['event_types'][number];

const EVENT_TYPES: { type: EventType; label: string }[] = [
  { type: 'sent', label: 'Sent' },
  { type: 'delivered', label: 'Delivered' },
  { type: 'deferred', label: 'Deferred' },
  { type: 'bounced', label: 'Bounced' },
  { type: 'complained', label: 'Complained' },
  { type: 'opened', label: 'Opened' },
  { type: 'clicked', label: 'Clicked' },
  { type: 'unsubscribed', label: 'Unsubscribed' },
  { type: 'inbound', label: 'Inbound mail' },
];

function AddEndpoint(props: { onAdded: () => void }) {
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [types, setTypes] = useState<EventType[]>(['delivered', 'bounced', 'complained']);
  const [created, setCreated] = useState<Endpoint | undefined>(undefined);
  const add = useAction(async () => {
    const body = { url: url.trim(), event_types: types, ...(description.trim() ? { description: description.trim() } : {}) };
    setCreated(await unwrap(api.POST('/webhooks', { body })));
    setUrl('');
    setDescription('');
    props.onAdded();
  });
  const toggle = (type: EventType, on: boolean) => setTypes((list) => (on ? [...list, type] : list.filter((t) => t !== type)));
  return (
    <section class="card" aria-labelledby="add-endpoint-heading">
      <h2 id="add-endpoint-heading">Add an endpoint</h2>
      {created?.secret && (
        <>
          <Notice kind="warning" title="Copy the signing secret now">
            The endpoint {created.url} is added. Its secret is shown this once; verify each POST's webhook-signature with it.
          </Notice>
          <SecretOnce value={created.secret} label="signing secret" />
        </>
      )}
      <ErrorNotice error={add.error} />
      <Form onSubmit={add.run} label="Add an event webhook">
        <Field
          label="Endpoint URL"
          name="url"
          type="url"
          value={url}
          onInput={setUrl}
          placeholder="https://example.com/mailpath/events"
          error={add.fieldError('url')}
          spellcheck={false}
          required
        />
        <Field label="Description" name="description" value={description} onInput={setDescription} hint="Optional: what receives it." />
        <fieldset class="event-types">
          <legend>Events to send</legend>
          {EVENT_TYPES.map(({ type, label }) => (
            <label key={type} class="check">
              <input type="checkbox" checked={types.includes(type)} onChange={(e) => toggle(type, (e.currentTarget as HTMLInputElement).checked)} />
              {label}
            </label>
          ))}
        </fieldset>
        <Submit busy={add.busy}>Add endpoint</Submit>
      </Form>
    </section>
  );
}

function DeadLetters(props: { canWrite: boolean }) {
  const [page, setPage] = useState<Page<Delivery> | undefined>(undefined);
  const [replayed, setReplayed] = useState<string | undefined>(undefined);
  // The cursor of the last page asked for: each page is added below the ones shown.
  const [after, setAfter] = useState<string | undefined>(undefined);
  const load = useLoad(
    () => unwrapList(api.GET('/webhooks/dead-letters', { params: { query: { limit: 50, ...(after ? { after } : {}) } } })),
    [after],
    (next) => setPage((prev) => (after && prev ? { ...next, items: [...prev.items, ...next.items] } : next)),
  );
  const replay = useAction(async (id: string) => {
    await unwrap(api.POST('/webhooks/dead-letters/{id}/replay', { params: { path: { id } } }));
    setReplayed(id);
    // The list again from its first page: the replayed delivery has left it.
    if (after) setAfter(undefined);
    else await load.reload();
  });
  return (
    <section class="card" aria-labelledby="dead-heading">
      <h2 id="dead-heading">Dead letters</h2>
      <p class="muted">Deliveries given up on: a refusal, every retry failing, or the endpoint off. Replaying sends one again with the same webhook-id.</p>
      <ErrorNotice error={load.error ?? replay.error} />
      <div aria-live="polite">
        {replayed && (
          <Notice kind="done" title="Queued again">
            The delivery is due now; its endpoint's log shows the attempt.
          </Notice>
        )}
      </div>
      {!page && !load.error && <p class="muted">Loading dead letters…</p>}
      {page && page.items.length === 0 && <p>None: every event reached its endpoint or is still being retried.</p>}
      {page && page.items.length > 0 && (
        <DeliveryTable caption="Dead letters" items={page.items} onReplay={props.canWrite ? (id) => replay.run(id) : undefined} busy={replay.busy} />
      )}
      {page?.next_cursor && (
        <button type="button" class="secondary" onClick={() => setAfter(page.next_cursor!)} disabled={load.loading}>
          Show older dead letters
        </button>
      )}
    </section>
  );
}

export default function Webhooks() {
  useTitle('Webhooks');
  const load = useLoad(() => unwrapList(api.GET('/webhooks', { params: { query: { limit: 200 } } })), []);
  const page = load.data;
  const canWrite = hasRole(identity.value, 'developer');
  return (
    <>
      <h1>Webhooks</h1>
      <p class="muted">
        Mailpath POSTs each event of the types an endpoint asks for, signed (Standard Webhooks), retrying failures. Inbound mail has its own webhook on the{' '}
        <a href="/app/inbound">Inbound</a> page.
      </p>
      <section class="card" aria-labelledby="endpoints-heading">
        <h2 id="endpoints-heading">Endpoints</h2>
        <ErrorNotice error={load.error} />
        {!page && !load.error && <p class="muted">Loading endpoints…</p>}
        {page && page.items.length === 0 && <p>No endpoints yet.</p>}
        {page && page.items.length > 0 && (
          <div class="table-wrap">
            <table>
              <caption class="visually-hidden">Event webhook endpoints ({page.total})</caption>
              <thead>
                <tr>
                  <th scope="col">URL</th>
                  <th scope="col">Events</th>
                  <th scope="col">State</th>
                </tr>
              </thead>
              <tbody>
                {page.items.map((e) => (
                  <tr key={e.id}>
                    <td>
                      <a href={`/app/webhooks/${e.id}`} class="break">
                        {e.url}
                      </a>
                      {e.description && <p class="hint">{e.description}</p>}
                    </td>
                    <td>{e.event_types.join(', ')}</td>
                    <td>{e.enabled ? <span class="badge ok">On</span> : <span class="badge">Off</span>}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      {canWrite && <AddEndpoint onAdded={() => void load.reload()} />}
      <DeadLetters canWrite={canWrite} />
    </>
  );
}
