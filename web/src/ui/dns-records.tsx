// A domain's DNS records as a table to publish from: each value with a copy button, its verification state announced
// as it changes (the live check), the zone-file download; the domain's status as a badge; and one record on its own
// (a DKIM rotation's new key) laid out the same way.
import type { DkimRotation, Domain, DnsRecord, Watch } from '../domains';
import { downloadZoneFile, RECORD_PURPOSE } from '../domains';
import { CopyButton } from './copy';

const STATUS: Record<Domain['status'], { label: string; tone: string }> = {
  verified: { label: 'Verified', tone: 'ok' },
  pending: { label: 'Not verified yet', tone: 'warning' },
  drifted: { label: 'Records changed', tone: 'problem' },
  superseded: { label: 'Claimed by another account', tone: 'problem' },
};

export function DomainStatus(props: { status: Domain['status'] }) {
  const { label, tone } = STATUS[props.status];
  return <span class={`badge ${tone}`}>{label}</span>;
}

function RecordState(props: { record: DnsRecord }) {
  const r = props.record;
  if (r.verified) return <span class="badge ok">Verified</span>;
  if (r.last_checked_at === null) return <span class="badge">Not checked yet</span>;
  return <span class="badge warning">Not found yet</span>;
}

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : 'never');

/** The records to publish, one row each; the state cell of each row is a live region, so a screen reader hears it turn. */
export function RecordsTable(props: { domain: Domain }) {
  const { domain } = props;
  return (
    <div class="table-wrap">
      <table class="records">
        <caption class="visually-hidden">DNS records to publish for {domain.name}</caption>
        <thead>
          <tr>
            <th scope="col">Type</th>
            <th scope="col">Host</th>
            <th scope="col">Value</th>
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {domain.records.map((r) => (
            <tr key={`${r.kind}-${r.host}`} data-testid={`record-${r.kind}`}>
              <td data-label="Type">
                <strong>{r.type}</strong>
                <span class="record-kind">{r.kind.toUpperCase()}</span>
              </td>
              <td data-label="Host">
                <div class="copyable">
                  <code>{r.host}</code>
                  <CopyButton text={r.host} what={`the ${r.kind.toUpperCase()} host`} />
                </div>
              </td>
              <td data-label="Value">
                <div class="copyable">
                  <code class="record-value">{r.priority !== null ? `${r.priority} ${r.value}` : r.value}</code>
                  <CopyButton text={r.value} what={`the ${r.kind.toUpperCase()} value`} />
                </div>
                <p class="hint">
                  {RECORD_PURPOSE[r.kind]}
                  {r.priority !== null ? `; priority ${r.priority}` : ''}
                </p>
              </td>
              <td data-label="Status">
                <span aria-live="polite" data-testid={`record-${r.kind}-state`}>
                  <RecordState record={r} />
                </span>
                {!r.verified && r.error && <p class="hint">{r.error}</p>}
                <p class="hint">Checked {when(r.last_checked_at)}</p>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

const WATCH_TEXT: Record<Watch, string> = {
  checking: 'Checking the DNS now…',
  waiting: 'Waiting for the records to appear; checking again shortly.',
  stopped: 'Automatic checks have stopped. Check again once the records are published.',
  done: '',
};

/** The download, the check button and one line saying where the live check is, announced politely. */
export function RecordActions(props: { domain: Domain; watch: Watch; onCheck: () => void; canCheck: boolean }) {
  const { domain, watch } = props;
  const verified = domain.records.filter((r) => r.verified).length;
  const summary =
    domain.status === 'verified'
      ? `All sending records verified: ${domain.name} can send.`
      : `${verified} of ${domain.records.length} records verified. ${WATCH_TEXT[watch]}`;
  return (
    <>
      <p class="watch-line" role="status" data-testid="verification-summary">
        {summary}
      </p>
      <div class="actions">
        <button type="button" class="secondary" onClick={() => downloadZoneFile(domain)}>
          Download zone file
        </button>
        {props.canCheck && (
          <button type="button" onClick={props.onCheck} disabled={watch === 'checking'} aria-busy={watch === 'checking' ? 'true' : undefined}>
            {watch === 'checking' ? 'Checking…' : 'Check DNS now'}
          </button>
        )}
      </div>
    </>
  );
}

/** One record to publish on its own, as a row of the records table is: a DKIM rotation's new key, with its zone line. */
export function PublishRecord(props: { record: NonNullable<DkimRotation['dns_record']>; what: string }) {
  const r = props.record;
  return (
    <div class="table-wrap">
      <table class="records" data-testid="publish-record">
        <caption class="visually-hidden">{props.what}</caption>
        <thead>
          <tr>
            <th scope="col">Type</th>
            <th scope="col">Host</th>
            <th scope="col">Value</th>
          </tr>
        </thead>
        <tbody>
          <tr>
            <td data-label="Type">
              <strong>{r.type}</strong>
              <span class="record-kind">DKIM</span>
            </td>
            <td data-label="Host">
              <div class="copyable">
                <code data-testid="publish-record-host">{r.host}</code>
                <CopyButton text={r.host} what="the new DKIM host" />
              </div>
            </td>
            <td data-label="Value">
              <div class="copyable">
                <code class="record-value" data-testid="publish-record-value">
                  {r.value}
                </code>
                <CopyButton text={r.value} what="the new DKIM value" />
              </div>
              <p class="hint">As a zone-file line, for a DNS host that imports them:</p>
              <div class="copyable">
                <code class="record-value">{r.zone_line}</code>
                <CopyButton text={r.zone_line} what="the new DKIM zone-file line" />
              </div>
            </td>
          </tr>
        </tbody>
      </table>
    </div>
  );
}
