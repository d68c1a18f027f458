// The onboarding checklist's steps that act on their own: an API key (shown once) and a test message followed to
// its delivery. The page (onboarding.tsx) decides from the API's state which are done.
import { useEffect, useState } from 'preact/hooks';
import type { paths } from '../../../clients/typescript/index';
import { api, unwrap } from '../api';
import { SecretOnce } from '../ui/copy';
import { ErrorNotice, Field, Form, Notice, Submit, useAction } from '../ui/form';

export type ApiKey = paths['/api-keys']['get']['responses'][200]['content']['application/json']['data']['items'][number];
export type Send = paths['/sends/{id}']['get']['responses'][200]['content']['application/json']['data'];
type Created = paths['/api-keys']['post']['responses'][201]['content']['application/json']['data'];

/** Keys are listed by name and prefix only: the API never shows a key's secret after the answer that created it. */
export function KeyStep(props: { keys: ApiKey[]; onCreated: (key: ApiKey) => void }) {
  const [name, setName] = useState('My first key');
  const [created, setCreated] = useState<Created | undefined>(undefined);
  const create = useAction(async () => {
    const answer = await unwrap(api.POST('/api-keys', { body: { name, mode: 'live' } }));
    setCreated(answer);
    // The list shows it at once from the answer, without its secret (as GET /api-keys would).
    const { key: _secret, ...listed } = answer;
    props.onCreated({ ...listed, last_used_at: null });
  });
  return (
    <>
      {created && (
        <>
          <Notice kind="warning" title="Copy your key now">
            This is the only time Mailpath shows it; it keeps only a hash. Store it in your app's secrets.
          </Notice>
          <SecretOnce value={created.key} label="API key" />
        </>
      )}
      {props.keys.length > 0 && (
        <ul class="key-list" aria-label="Your API keys">
          {props.keys.map((k) => (
            <li key={k.id}>
              {k.name}: <code data-testid="key-prefix">{k.prefix}…</code> <span class="badge">{k.mode}</span>
            </li>
          ))}
        </ul>
      )}
      <ErrorNotice error={create.error} />
      <Form onSubmit={create.run} label="Create an API key">
        <Field label="Key name" name="key-name" value={name} onInput={setName} hint="Say where it is used, e.g. production web app." required />
        <Submit busy={create.busy}>{props.keys.length > 0 ? 'Create another key' : 'Create API key'}</Submit>
      </Form>
    </>
  );
}

const FINAL = new Set(['delivered', 'bounced', 'failed', 'dropped', 'simulated']);

/** Follows a send until it reaches a final status, a bounded number of times (about a minute), and reports each change. */
export function useSendProgress(id: string | undefined) {
  const [send, setSend] = useState<Send | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  useEffect(() => {
    if (!id) return;
    let alive = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = async (left: number) => {
      try {
        const fresh = await unwrap(api.GET('/sends/{id}', { params: { path: { id } } }));
        if (!alive) return;
        setSend(fresh);
        if (FINAL.has(fresh.status) || left <= 0) return;
      } catch (err) {
        if (alive) setError(err);
        return;
      }
      timer = setTimeout(() => void poll(left - 1), 2000);
    };
    void poll(30);
    return () => {
      alive = false;
      clearTimeout(timer);
    };
  }, [id]);
  return { send, error };
}

export function SendStep(props: { from: string | undefined; to: string; onSent: (id: string) => void }) {
  const [to, setTo] = useState(props.to);
  const [from, setFrom] = useState(props.from ?? '');
  const [subject, setSubject] = useState('Hello from Mailpath');
  const [sent, setSent] = useState<{ message_id: string; status: string } | undefined>(undefined);
  useEffect(() => {
    if (props.from && !from) setFrom(props.from);
  }, [props.from]);
  const send = useAction(async () => {
    const body = { to, from_email: from, subject, body_text: 'It works: this message was sent from the Mailpath dashboard.' };
    const answer = await unwrap(api.POST('/transactional/send', { body }));
    setSent(answer);
    props.onSent(answer.message_id);
  });
  if (!props.from) return <p class="muted">Needs a verified domain to send from (the steps above).</p>;
  return (
    <>
      {sent && (
        <Notice kind="done" title="Message accepted">
          Queued as <code data-testid="sent-message-id">{sent.message_id}</code> ({sent.status}).
        </Notice>
      )}
      <ErrorNotice error={send.error} />
      <Form onSubmit={send.run} label="Send a test message">
        <div class="field-row">
          <Field label="To" name="to" type="email" value={to} onInput={setTo} autoComplete="email" error={send.fieldError('to')} required />
          <Field
            label="From"
            name="from_email"
            type="email"
            value={from}
            onInput={setFrom}
            hint="An address at your verified domain."
            error={send.fieldError('from_email')}
            required
          />
        </div>
        <Field label="Subject" name="subject" value={subject} onInput={setSubject} required />
        <Submit busy={send.busy}>Send test message</Submit>
      </Form>
    </>
  );
}

const SEND_STATUS: Record<string, string> = {
  queued: 'Queued: on its way to the receiving server.',
  sending: 'Sending: the receiving server is being contacted.',
  deferred: 'Deferred: it will be retried.',
  delivered: 'Delivered: the receiving server accepted it.',
  bounced: 'Bounced: the receiving server refused it.',
  failed: 'Failed.',
  dropped: 'Dropped: the recipient is suppressed.',
  simulated: 'Simulated: sent with a test key, never delivered.',
};

/** The last send and where it stands, announced as it moves; the activity page has its whole story. */
export function ActivityStep(props: { sendId: string | undefined }) {
  const { send, error } = useSendProgress(props.sendId);
  if (!props.sendId) return <p class="muted">Send a message first; its events then appear in the activity feed.</p>;
  return (
    <>
      <ErrorNotice error={error} />
      <p role="status" data-testid="send-status">
        {send ? (
          <>
            <span class={`badge ${send.status === 'delivered' ? 'ok' : ''}`}>{send.status}</span> {SEND_STATUS[send.status] ?? ''} To {send.to}.
          </>
        ) : (
          'Looking up the message…'
        )}
      </p>
      <p>
        <a href={`/app/activity/${props.sendId}`}>See the message in the activity feed</a>
      </p>
    </>
  );
}
