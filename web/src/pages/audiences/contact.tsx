// One contact: its profile and custom fields, its lists, its history (every event of its address, newest first), and
// what a person may ask for: re-subscribing (with the consent given) and erasure, which cannot be undone.
import { useState } from 'preact/hooks';
import { useRoute } from 'preact-iso/router';
import { api, unwrap, unwrapList } from '../../api';
import { hasRole, identity } from '../../session';
import { ConfirmButton } from '../../ui/confirm';
import { Facts } from '../../ui/facts';
import { ErrorNotice, Field, Form, Notice, Submit, useAction } from '../../ui/form';
import { Loading, useLoad } from '../../ui/load';
import { TableWrap, when } from '../settings/nav';
import { ContactLists } from './contact-lists';
import { ContactStatus } from './contacts';
import { AudiencePage } from './nav';
import { PROFILE } from './profile';

function shown(value: unknown): string {
  if (value === null || value === undefined || value === '') return '—';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

function Timeline(props: { email: string }) {
  const load = useLoad(() => unwrapList(api.GET('/events', { params: { query: { recipient: props.email, limit: 50 } } })), [props.email]);
  return (
    <section class="card" aria-labelledby="history-heading">
      <h2 id="history-heading">History</h2>
      <Loading state={load} what="the history">
        {(page) =>
          page.items.length === 0 ? (
            <p>Nothing sent to this address yet.</p>
          ) : (
            <ol class="timeline" data-testid="contact-events">
              {page.items.map((e) => (
                <li key={e.id}>
                  <strong>{e.type}</strong> <span class="muted">{when(e.occurred_at)}</span>
                  {e.message_id && (
                    <a class="block" href={`/app/activity/${e.message_id}`}>
                      The message
                    </a>
                  )}
                  {Object.keys(e.detail).length > 0 && (
                    <span class="hint block">
                      {Object.entries(e.detail)
                        .map(([k, v]) => `${k}: ${shown(v)}`)
                        .join('; ')}
                    </span>
                  )}
                </li>
              ))}
            </ol>
          )
        }
      </Loading>
    </section>
  );
}

function Resubscribe(props: { id: string; onDone: () => void }) {
  const [reason, setReason] = useState('');
  const action = useAction(async () => {
    await unwrap(api.POST('/contacts/{id}/resubscribe', { params: { path: { id: props.id } }, body: { reason: reason.trim() } }));
    props.onDone();
  });
  return (
    <Form onSubmit={action.run} label="Re-subscribe">
      <ErrorNotice error={action.error} />
      <Field
        label="How the person asked to be mailed again"
        name="reason"
        value={reason}
        onInput={setReason}
        hint="Kept in the audit log as their consent."
        error={action.fieldError('reason')}
        required
      />
      <Submit busy={action.busy}>Re-subscribe</Submit>
    </Form>
  );
}

export default function Contact() {
  const { params } = useRoute();
  const id = params['id']!;
  const load = useLoad(() => unwrap(api.GET('/contacts/{id}', { params: { path: { id } } })), [id]);
  const [erased, setErased] = useState(false);
  const erase = useAction(async () => {
    await unwrap(api.POST('/contacts/{id}/erase', { params: { path: { id } } }));
    setErased(true);
    await load.reload();
  });
  const canWrite = hasRole(identity.value, 'developer');
  const title = load.data ? (load.data.email ?? 'Erased contact') : 'Contact';
  return (
    <AudiencePage title={title}>
      <Loading state={load} what="the contact">
        {(c) => (
          <>
            {erased && (
              <Notice kind="done" title="Erased">
                Only a hash of the address is kept, so mail to it is still dropped.
              </Notice>
            )}
            <section class="card" aria-labelledby="profile-heading">
              <h2 id="profile-heading">Profile</h2>
              <Facts
                testId="contact-profile"
                items={[
                  [
                    'Status',
                    <>
                      <ContactStatus status={c.status} />
                      {c.unsubscribed_at && <span class="hint block">unsubscribed {when(c.unsubscribed_at)}</span>}
                      {c.erased_at && <span class="hint block">erased {when(c.erased_at)}</span>}
                    </>,
                  ],
                  ...PROFILE.map((p): [string, string] => [p.label, shown((c as Record<string, unknown>)[p.key])]),
                  ['Best hour to send', c.best_send_hour === null ? '—' : `${c.best_send_hour}:00 UTC`],
                  ['Added', when(c.created_at)],
                ]}
              />
            </section>
            <section class="card" aria-labelledby="fields-heading">
              <h2 id="fields-heading">Custom fields</h2>
              {Object.keys(c.custom_fields).length === 0 ? (
                <p>None set.</p>
              ) : (
                <TableWrap label="Custom fields">
                  <table data-testid="contact-fields">
                    <caption class="visually-hidden">Custom field values</caption>
                    <thead>
                      <tr>
                        <th scope="col">Field</th>
                        <th scope="col">Value</th>
                      </tr>
                    </thead>
                    <tbody>
                      {Object.entries(c.custom_fields).map(([key, value]) => (
                        <tr key={key}>
                          <td class="mono">{key}</td>
                          <td class="break">{shown(value)}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </TableWrap>
              )}
            </section>
            {/* Keyed by updated_at: a changed contact (an erased one left every list) has its lists read again. */}
            <ContactLists key={c.updated_at} contactId={c.id} canChange={canWrite} canAdd={c.status !== 'deleted'} />
            {c.email && <Timeline email={c.email} />}
            {canWrite && c.status === 'unsubscribed' && (
              <section class="card" aria-labelledby="resubscribe-heading">
                <h2 id="resubscribe-heading">Re-subscribe</h2>
                <Resubscribe id={c.id} onDone={() => void load.reload()} />
              </section>
            )}
            {canWrite && !c.erased_at && (
              <section class="card" aria-labelledby="erase-heading">
                <h2 id="erase-heading">Erase</h2>
                <p class="muted">For a person who asks to be forgotten: every field is cleared and the contact leaves every list. This cannot be undone.</p>
                <ErrorNotice error={erase.error} />
                <ConfirmButton label="Erase contact" title="Erase this contact for good?" onConfirm={() => void erase.run()} busy={erase.busy}>
                  The address, every field and its list memberships are removed; only a hash stays, so mail to it is still dropped.
                </ConfirmButton>
              </section>
            )}
          </>
        )}
      </Loading>
    </AudiencePage>
  );
}
