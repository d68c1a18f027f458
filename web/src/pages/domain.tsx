// One sending domain: its status and why, the records to publish (copy, zone file, live check), the DKIM key with its
// rotation (started here behind a confirmation, its new record to publish and its state), and deleting it. Another
// workspace's domain id reads as "Not found", as the API answers it.
import type { Ref } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso/router';
import { ApiError, api, unwrap } from '../api';
import { getDomain, rotateDkim, useVerificationWatch, type DkimRotation, type Domain } from '../domains';
import { hasRole, identity } from '../session';
import { ConfirmButton } from '../ui/confirm';
import { DomainStatus, PublishRecord, RecordActions, RecordsTable } from '../ui/dns-records';
import { ErrorNotice, Field, Notice, useAction } from '../ui/form';
import { useTitle } from '../ui/layout';
import { useLoad } from '../ui/load';
import { NotFoundMessage } from './not-found';

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : '—');

/** A rotation's state in a sender's words: what Mailpath is doing, and what is asked of them. */
const ROTATION_STATE: Record<DkimRotation['state'], { tone: string; says: string }> = {
  pending: { tone: 'warning', says: 'The new key is made; it is published next.' },
  publishing: {
    tone: 'warning',
    says: 'Publish the record below. Mailpath checks every 30 minutes whether every public resolver returns it; then the new key signs.',
  },
  active: { tone: 'ok', says: 'The new key signs. The old key stays published until its grace period ends.' },
  retiring: { tone: 'ok', says: 'The new key signs; the old one is being retired.' },
  retired: { tone: '', says: 'This rotation is over.' },
};

const PUBLISH_STATUS: Record<DkimRotation['dns_publish_status'], string> = {
  awaiting_publication: 'waiting for the record to appear in DNS',
  provider_managed: 'published by your DNS provider',
  confirmed_published: 'confirmed published; waiting for every resolver to return it',
  propagated: 'every public resolver returns it',
};

function Rotation(props: { rotation: DkimRotation; heading: Ref<HTMLHeadingElement> }) {
  const r = props.rotation;
  return (
    <div class="rotation" data-testid="rotation">
      <h3 ref={props.heading} tabIndex={-1}>
        Key rotation{' '}
        <span class={`badge ${ROTATION_STATE[r.state].tone}`} data-testid="rotation-state">
          {r.state}
        </span>
      </h3>
      <p>{ROTATION_STATE[r.state].says}</p>
      <dl class="key-facts">
        <dt>New selector</dt>
        <dd>
          <code>{r.new_selector}</code>
        </dd>
        <dt>DNS</dt>
        <dd>{PUBLISH_STATUS[r.dns_publish_status]}</dd>
        <dt>Started</dt>
        <dd>{when(r.created_at)}</dd>
        <dt>Last checked</dt>
        <dd>{when(r.last_checked_at)}</dd>
        {r.reason && (
          <>
            <dt>Reason</dt>
            <dd>{r.reason}</dd>
          </>
        )}
      </dl>
      {r.error && (
        <Notice kind="warning" title="Not active yet">
          {r.error}
        </Notice>
      )}
      {r.dns_record && <PublishRecord record={r.dns_record} what={`The new DKIM record to publish for ${r.domain}`} />}
    </div>
  );
}

/**
 * The DKIM key, its rotation in flight, and (for a writer, when none is) rotating it behind a confirmation with an
 * optional reason (kept in the audit log). A refusal is shown in the API's words, and the domain read again: a 409
 * means a rotation started elsewhere (another tab, a colleague) or the claim does not own its name.
 */
function DkimKey(props: { domain: Domain; canWrite: boolean; onRotated: (r: DkimRotation) => void; onRefused: () => void }) {
  const { dkim } = props.domain;
  const [reason, setReason] = useState('');
  const heading = useRef<HTMLHeadingElement>(null);
  // The button that opened the dialog is gone once a rotation shows: focus moves to the rotation, not to the page.
  const asked = useRef(false);
  useEffect(() => {
    if (asked.current && dkim.rotation) heading.current?.focus();
  }, [dkim.rotation?.id]);
  const rotate = useAction(async () => {
    asked.current = true;
    try {
      props.onRotated(await rotateDkim(props.domain.id, reason));
      setReason('');
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) props.onRefused();
      throw err;
    }
  });
  return (
    <section class="card" aria-labelledby="dkim-heading">
      <h2 id="dkim-heading">DKIM key</h2>
      <dl class="key-facts">
        <dt>Selector</dt>
        <dd>
          <code>{dkim.selector ?? 'none'}</code>
        </dd>
        <dt>Algorithm</dt>
        <dd>{dkim.algorithm}</dd>
        <dt>Key size</dt>
        <dd>{dkim.key_bits ? `${dkim.key_bits} bits` : '—'}</dd>
        <dt>Created</dt>
        <dd>{when(dkim.key_created_at)}</dd>
      </dl>
      <ErrorNotice error={rotate.error} />
      {dkim.rotation ? (
        <Rotation rotation={dkim.rotation} heading={heading} />
      ) : (
        <p class="muted">No key rotation in progress. Mailpath signs every message from this domain with this key.</p>
      )}
      {/* One rotation at a time: while one is in flight there is nothing to start. */}
      {props.canWrite && !dkim.rotation && (
        <ConfirmButton
          label="Rotate DKIM key"
          title={`Rotate the DKIM key of ${props.domain.unicode_name}?`}
          onConfirm={() => rotate.run()}
          busy={rotate.busy}
          class="secondary"
        >
          <p>
            Mailpath makes a new key under a new selector. The current key keeps signing until the new record is published and every public resolver returns it.
          </p>
          <Field
            label="Reason (optional)"
            name="rotation-reason"
            value={reason}
            onInput={setReason}
            maxLength={500}
            hint="Kept in the audit log, e.g. a yearly rotation or a key that may have leaked."
          />
        </ConfirmButton>
      )}
    </section>
  );
}

function DeleteDomain(props: { domain: Domain }) {
  const { route } = useLocation();
  const [confirming, setConfirming] = useState(false);
  const remove = useAction(async () => {
    await unwrap(api.DELETE('/domains/{id}', { params: { path: { id: props.domain.id } } }));
    route('/app/domains');
  });
  return (
    <section class="card" aria-labelledby="delete-heading">
      <h2 id="delete-heading">Delete the domain</h2>
      <p>It stops sending at once, and its DKIM keys are deleted.</p>
      <ErrorNotice error={remove.error} />
      {confirming ? (
        <div class="actions">
          <button type="button" class="danger" onClick={() => remove.run()} disabled={remove.busy}>
            Delete {props.domain.name}
          </button>
          <button type="button" class="secondary" onClick={() => setConfirming(false)}>
            Keep it
          </button>
        </div>
      ) : (
        <button type="button" class="secondary" onClick={() => setConfirming(true)}>
          Delete…
        </button>
      )}
    </section>
  );
}

export default function DomainPage() {
  const { params } = useRoute();
  const id = params['id'] ?? '';
  const [domain, setDomain] = useState<Domain | undefined>(undefined);
  const load = useLoad(() => getDomain(id), [id], setDomain);
  const canWrite = hasRole(identity.value, 'developer');
  // Viewers may not verify (a write): they see the state as last checked.
  const live = useVerificationWatch(canWrite ? domain : undefined, setDomain);
  const notFound = load.error instanceof ApiError && load.error.status === 404;
  useTitle(notFound ? 'Not found' : (domain?.unicode_name ?? 'Domain'));

  if (notFound) return <NotFoundMessage />;
  if (load.error) return <ErrorNotice error={load.error} />;
  if (!domain) return <p class="muted">Loading the domain…</p>;
  return (
    <>
      <nav aria-label="Breadcrumb" class="breadcrumb">
        <a href="/app/domains">Domains</a> /
      </nav>
      <div class="page-head">
        <h1>{domain.unicode_name}</h1>
        <DomainStatus status={domain.status} />
      </div>
      {domain.claim_reason && (
        <Notice kind={domain.status === 'superseded' ? 'problem' : 'info'} title="Not yet yours to send from">
          {domain.claim_reason}
        </Notice>
      )}
      {domain.status === 'drifted' && (
        <Notice kind="problem" title="A record changed">
          A record that verified is gone or different; restore it as shown below.
        </Notice>
      )}
      <section class="card" aria-labelledby="records-heading">
        <h2 id="records-heading">DNS records</h2>
        <p>Publish these at your DNS host, exactly as shown. SPF, DKIM and DMARC are needed to send; MX is for receiving mail.</p>
        <RecordsTable domain={domain} />
        <ErrorNotice error={live.error} />
        <RecordActions domain={domain} watch={live.watch} onCheck={live.checkNow} canCheck={canWrite} />
      </section>
      <DkimKey
        domain={domain}
        canWrite={canWrite}
        onRotated={(rotation) => setDomain({ ...domain, dkim: { ...domain.dkim, rotation } })}
        onRefused={() => void load.reload()}
      />
      <section class="card" aria-labelledby="history-heading">
        <h2 id="history-heading">History</h2>
        <dl class="key-facts">
          <dt>Added</dt>
          <dd>{when(domain.created_at)}</dd>
          <dt>Verified</dt>
          <dd>{when(domain.verified_at)}</dd>
          <dt>Last checked</dt>
          <dd>{when(domain.last_checked_at)}</dd>
        </dl>
      </section>
      {canWrite && <DeleteDomain domain={domain} />}
    </>
  );
}
