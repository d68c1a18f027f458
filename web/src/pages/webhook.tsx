// One event webhook endpoint: its settings (on or off, rotate the secret, delete), a test POST with the receiver's
// answer, and its delivery log, filterable by status. Another workspace's endpoint id reads as "Not found".
import { useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso/router';
import { ApiError, api, unwrap, unwrapList, type Page } from '../api';
import { hasRole, identity } from '../session';
import { SecretOnce } from '../ui/copy';
import { DeliveryTable, type Delivery, type Endpoint } from '../ui/deliveries';
import { ErrorNotice, Notice, useAction } from '../ui/form';
import { useTitle } from '../ui/layout';
import { useLoad } from '../ui/load';
import { TestResultNotice } from './inbound-webhook';
import { NotFoundMessage } from './not-found';

type Status = Delivery['status'] | '';
type TestAnswer = { delivered: boolean; http_status: number | null; duration_ms: number; error: string | null };

function DeliveryLog(props: { id: string }) {
  const [status, setStatus] = useState<Status>('');
  const [page, setPage] = useState<Page<Delivery> | undefined>(undefined);
  // The cursor of the last page asked for: each page is added below the ones shown; a new status starts again.
  const [after, setAfter] = useState<string | undefined>(undefined);
  const load = useLoad(
    () => {
      const query = { limit: 50, ...(status ? { status } : {}), ...(after ? { after } : {}) };
      return unwrapList(api.GET('/webhooks/{id}/deliveries', { params: { path: { id: props.id }, query } }));
    },
    [props.id, status, after],
    (next) => setPage((prev) => (after && prev ? { ...next, items: [...prev.items, ...next.items] } : next)),
  );
  const refresh = () => (after ? setAfter(undefined) : void load.reload());
  return (
    <section class="card" aria-labelledby="log-heading">
      <div class="page-head">
        <h2 id="log-heading">Delivery log</h2>
        <div class="actions inline">
          <label class="inline-label">
            Status{' '}
            <select
              value={status}
              onChange={(e) => {
                setStatus((e.currentTarget as HTMLSelectElement).value as Status);
                setAfter(undefined);
              }}
            >
              <option value="">All</option>
              <option value="pending">Pending</option>
              <option value="delivered">Delivered</option>
              <option value="dead">Dead</option>
            </select>
          </label>
          <button type="button" class="secondary" onClick={refresh} disabled={load.loading}>
            Refresh
          </button>
        </div>
      </div>
      <ErrorNotice error={load.error} />
      {!page && !load.error && <p class="muted">Loading deliveries…</p>}
      {page && (
        <p class="muted" aria-live="polite" data-testid="delivery-count">
          {page.total} {page.total === 1 ? 'delivery' : 'deliveries'}
        </p>
      )}
      {page && page.items.length > 0 && <DeliveryTable caption="Deliveries of this endpoint" items={page.items} />}
      {page?.next_cursor && (
        <button type="button" class="secondary" onClick={() => setAfter(page.next_cursor!)} disabled={load.loading}>
          Show older deliveries
        </button>
      )}
    </section>
  );
}

function Controls(props: { endpoint: Endpoint; onChange: (e: Endpoint) => void }) {
  const { route } = useLocation();
  const { endpoint } = props;
  const [secret, setSecret] = useState<string | undefined>(undefined);
  const [test, setTest] = useState<TestAnswer | undefined>(undefined);
  const [confirming, setConfirming] = useState(false);
  const path = { path: { id: endpoint.id } };
  const toggle = useAction(async () => props.onChange(await unwrap(api.PATCH('/webhooks/{id}', { params: path, body: { enabled: !endpoint.enabled } }))));
  const rotate = useAction(async () => {
    const answer = await unwrap(api.POST('/webhooks/{id}/rotate-secret', { params: path }));
    setSecret(answer.secret ?? undefined);
    props.onChange(answer);
  });
  const send = useAction(async () => {
    setTest(undefined);
    setTest(await unwrap(api.POST('/webhooks/{id}/test', { params: path })));
  });
  const remove = useAction(async () => {
    await unwrap(api.DELETE('/webhooks/{id}', { params: path }));
    route('/app/webhooks');
  });
  return (
    <section class="card" aria-labelledby="controls-heading">
      <h2 id="controls-heading">Endpoint</h2>
      {secret && (
        <>
          <Notice kind="warning" title="Copy the new signing secret now">
            Shown this once. For 24 hours each POST is signed with both the old and the new secret.
          </Notice>
          <SecretOnce value={secret} label="signing secret" />
        </>
      )}
      <ErrorNotice error={toggle.error ?? rotate.error ?? send.error ?? remove.error} />
      <div class="actions">
        <button type="button" onClick={() => send.run()} disabled={send.busy} aria-busy={send.busy ? 'true' : undefined}>
          {send.busy ? 'Sending…' : 'Send a test event'}
        </button>
        <button type="button" class="secondary" onClick={() => toggle.run()} disabled={toggle.busy}>
          {endpoint.enabled ? 'Turn off' : 'Turn on'}
        </button>
        <button type="button" class="secondary" onClick={() => rotate.run()} disabled={rotate.busy}>
          Rotate the secret
        </button>
        {confirming ? (
          <>
            <button type="button" class="danger" onClick={() => remove.run()} disabled={remove.busy}>
              Delete the endpoint and its log
            </button>
            <button type="button" class="secondary" onClick={() => setConfirming(false)}>
              Keep it
            </button>
          </>
        ) : (
          <button type="button" class="secondary" onClick={() => setConfirming(true)}>
            Delete…
          </button>
        )}
      </div>
      <div aria-live="polite" data-testid="endpoint-test-result">
        {test && <TestResultNotice result={test} ms={test.duration_ms} />}
      </div>
    </section>
  );
}

export default function WebhookPage() {
  const { params } = useRoute();
  const id = params['id'] ?? '';
  const [endpoint, setEndpoint] = useState<Endpoint | undefined>(undefined);
  const load = useLoad(() => unwrap(api.GET('/webhooks/{id}', { params: { path: { id } } })), [id], setEndpoint);
  const notFound = load.error instanceof ApiError && load.error.status === 404;
  useTitle(notFound ? 'Not found' : 'Webhook');
  if (notFound) return <NotFoundMessage />;
  if (load.error) return <ErrorNotice error={load.error} />;
  if (!endpoint) return <p class="muted">Loading the endpoint…</p>;
  return (
    <>
      <nav aria-label="Breadcrumb" class="breadcrumb">
        <a href="/app/webhooks">Webhooks</a> /
      </nav>
      <div class="page-head">
        <h1 class="break">{endpoint.url}</h1>
        {endpoint.enabled ? <span class="badge ok">On</span> : <span class="badge">Off</span>}
      </div>
      {endpoint.description && <p>{endpoint.description}</p>}
      <p>
        Events: <strong>{endpoint.event_types.join(', ')}</strong>
      </p>
      {hasRole(identity.value, 'developer') && <Controls endpoint={endpoint} onChange={setEndpoint} />}
      <DeliveryLog id={id} />
    </>
  );
}
