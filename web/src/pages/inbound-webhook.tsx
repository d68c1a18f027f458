// The inbound webhook: where Mailpath POSTs every message received for the workspace's domains, whether it does,
// its signing secret (shown once, on creation or rotation), and a test POST with what the receiver answered.
import { useState } from 'preact/hooks';
import type { paths } from '../../../clients/typescript/index';
import { api, unwrap } from '../api';
import { SecretOnce } from '../ui/copy';
import { ErrorNotice, Field, Form, Notice, Submit, useAction } from '../ui/form';
import { useLoad } from '../ui/load';

type Settings = paths['/settings/inbound-webhook']['get']['responses'][200]['content']['application/json']['data'];
type TestResult = paths['/settings/inbound-webhook/test-send']['post']['responses'][200]['content']['application/json']['data'];

export function TestResultNotice(props: { result: { delivered: boolean; http_status: number | null; error: string | null }; ms: number }) {
  const { result } = props;
  return (
    <Notice kind={result.delivered ? 'done' : 'problem'} title={result.delivered ? 'The receiver accepted the test' : 'The test was not accepted'}>
      {result.http_status !== null ? `HTTP ${result.http_status}` : 'No answer'} in {props.ms} ms{result.error ? `: ${result.error}` : '.'}
    </Notice>
  );
}

export function InboundWebhookSettings(props: { canWrite: boolean }) {
  const [settings, setSettings] = useState<Settings | undefined>(undefined);
  const [url, setUrl] = useState('');
  const [enabled, setEnabled] = useState(false);
  const [secret, setSecret] = useState<string | undefined>(undefined);
  const [saved, setSaved] = useState(false);
  const [test, setTest] = useState<TestResult | undefined>(undefined);
  const adopt = (s: Settings) => {
    setSettings(s);
    setUrl(s.webhook_url ?? '');
    setEnabled(s.enabled);
    if (s.secret) setSecret(s.secret);
  };
  const load = useLoad(() => unwrap(api.GET('/settings/inbound-webhook')), [], adopt);
  const save = useAction(async () => {
    setSaved(false);
    adopt(await unwrap(api.PATCH('/settings/inbound-webhook', { body: { webhook_url: url.trim() || null, enabled: url.trim() ? enabled : false } })));
    setSaved(true);
  });
  const rotate = useAction(async () => {
    adopt(await unwrap(api.PATCH('/settings/inbound-webhook', { params: { query: { rotate_secret: 'true' } }, body: {} })));
  });
  const send = useAction(async () => {
    setTest(undefined);
    setTest(await unwrap(api.POST('/settings/inbound-webhook/test-send')));
  });

  return (
    <section class="card" aria-labelledby="inbound-webhook-heading">
      <h2 id="inbound-webhook-heading">Inbound webhook</h2>
      <p class="muted">Every message received at your domains is POSTed here as JSON, signed with the secret below.</p>
      <ErrorNotice error={load.error} />
      {!settings && !load.error && <p class="muted">Loading the webhook settings…</p>}
      {secret && (
        <>
          <Notice kind="warning" title="Copy the signing secret now">
            It is shown this once; verify each POST's signature with it.
          </Notice>
          <SecretOnce value={secret} label="signing secret" />
        </>
      )}
      {settings && (
        <>
          {saved && <Notice kind="done" title="Saved" />}
          <ErrorNotice error={save.error} />
          <Form onSubmit={save.run} label="Inbound webhook settings">
            <Field
              label="Webhook URL"
              name="webhook_url"
              type="url"
              value={url}
              onInput={setUrl}
              placeholder="https://example.com/mailpath/inbound"
              hint="An https address on the public internet. Leave empty to remove it."
              error={save.fieldError('webhook_url')}
              spellcheck={false}
            />
            <div class="field check">
              <input
                type="checkbox"
                id="inbound-enabled"
                checked={enabled}
                disabled={!props.canWrite}
                onChange={(e) => setEnabled((e.currentTarget as HTMLInputElement).checked)}
              />
              <label for="inbound-enabled">POST inbound mail to this URL</label>
            </div>
            {props.canWrite && <Submit busy={save.busy}>Save webhook</Submit>}
          </Form>
          <p class="hint">Secret made {settings.secret_rotated_at ? new Date(settings.secret_rotated_at).toLocaleString() : 'on the first save'}.</p>
          {props.canWrite && settings.webhook_url && (
            <div class="actions">
              <button type="button" class="secondary" onClick={() => send.run()} disabled={send.busy} aria-busy={send.busy ? 'true' : undefined}>
                {send.busy ? 'Sending…' : 'Send a test message'}
              </button>
              <button type="button" class="secondary" onClick={() => rotate.run()} disabled={rotate.busy}>
                Rotate the secret
              </button>
            </div>
          )}
          <ErrorNotice error={send.error ?? rotate.error} />
          <div aria-live="polite" data-testid="inbound-test-result">
            {test && <TestResultNotice result={test} ms={test.round_trip_ms} />}
          </div>
        </>
      )}
    </section>
  );
}
