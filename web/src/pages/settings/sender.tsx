// The default sender: what a campaign without its own From takes. Shows the one in force and where it comes from (set
// here, or derived from the oldest verified domain), sets it (an address at a verified domain: the API checks) or clears it.
import { useState } from 'preact/hooks';
import { api, unwrap } from '../../api';
import { hasRole, identity } from '../../session';
import { ConfirmButton } from '../../ui/confirm';
import { ErrorNotice, Field, Form, Notice, Submit, useAction } from '../../ui/form';
import { useLoad } from '../../ui/load';
import { SettingsPage, when } from './nav';

type Sender = {
  from_email: string | null;
  from_name: string | null;
  reply_to: string | null;
  source: 'settings' | 'derived' | null;
  updated_at: string | null;
};

export default function SenderSettings() {
  const edit = hasRole(identity.value, 'developer');
  const [sender, setSender] = useState<Sender | undefined>(undefined);
  const [fromEmail, setFromEmail] = useState('');
  const [fromName, setFromName] = useState('');
  const [replyTo, setReplyTo] = useState('');
  const [done, setDone] = useState<string | undefined>(undefined);
  const show = (s: Sender) => {
    setSender(s);
    setFromEmail(s.source === 'settings' ? (s.from_email ?? '') : '');
    setFromName(s.source === 'settings' ? (s.from_name ?? '') : '');
    setReplyTo(s.source === 'settings' ? (s.reply_to ?? '') : '');
  };
  const load = useLoad(() => unwrap(api.GET('/settings/sender')), [], show);
  const save = useAction(async () => {
    setDone(undefined);
    const body = { from_email: fromEmail.trim(), from_name: fromName.trim() || null, reply_to: replyTo.trim() || null };
    show(await unwrap(api.PUT('/settings/sender', { body })));
    setDone('Default sender saved');
  });
  const clear = useAction(async () => {
    setDone(undefined);
    await unwrap(api.DELETE('/settings/sender'));
    show(await unwrap(api.GET('/settings/sender')));
    setDone('Default sender cleared');
  });
  return (
    <SettingsPage
      title="Default sender"
      lead="Campaigns that name no From address are sent from this one; from_name and reply_to fill what a campaign leaves empty."
    >
      <ErrorNotice error={load.error} />
      {!sender && !load.error && <p class="muted">Loading…</p>}
      {sender && (
        <section class="card" aria-labelledby="current-heading" data-testid="sender-current">
          <h2 id="current-heading">In force now</h2>
          {sender.from_email ? (
            <dl class="details">
              <dt>From</dt>
              <dd>
                {sender.from_name ? `${sender.from_name} ` : ''}
                <code>&lt;{sender.from_email}&gt;</code>
              </dd>
              <dt>Reply-To</dt>
              <dd>{sender.reply_to ? <code>{sender.reply_to}</code> : 'none'}</dd>
              <dt>Comes from</dt>
              <dd>{sender.source === 'settings' ? `set here, ${when(sender.updated_at)}` : 'derived from your oldest verified sending domain'}</dd>
            </dl>
          ) : (
            <Notice kind="warning" title="No default sender">
              Verify a sending domain first: the default is derived from it until you set one here.
            </Notice>
          )}
        </section>
      )}
      {sender && edit && (
        <section class="card" aria-labelledby="set-heading">
          <h2 id="set-heading">Set the default</h2>
          {done && <Notice kind="done" title={done} />}
          <ErrorNotice error={save.error ?? clear.error} />
          <Form onSubmit={save.run} label="Set the default sender">
            <Field
              label="From address"
              name="from_email"
              type="email"
              value={fromEmail}
              onInput={setFromEmail}
              hint="An address at one of your verified sending domains."
              error={save.fieldError('from_email')}
              required
            />
            <Field label="From name" name="from_name" value={fromName} onInput={setFromName} maxLength={200} error={save.fieldError('from_name')} />
            <Field label="Reply-To" name="reply_to" type="email" value={replyTo} onInput={setReplyTo} error={save.fieldError('reply_to')} />
            <div class="actions">
              <Submit busy={save.busy}>Save default sender</Submit>
              {sender.source === 'settings' && (
                <ConfirmButton
                  label="Clear"
                  ariaLabel="Clear the default sender"
                  title="Clear the default sender?"
                  onConfirm={() => clear.run()}
                  busy={clear.busy}
                  class="secondary"
                >
                  <p>Campaigns without a From address then use the one derived from your oldest verified domain.</p>
                </ConfirmButton>
              )}
            </div>
          </Form>
        </section>
      )}
    </SettingsPage>
  );
}
