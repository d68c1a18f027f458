// One send, answering "why didn't it arrive?": the verdict in a sentence, the envelope, each gate's decision, the
// delivery attempts and events on one timeline, the DKIM signature and the signed message as it left. Another
// workspace's id is a 404 from the API, shown as "Not found" inside the shell.
import { useRoute } from 'preact-iso/router';
import { ApiError, api, unwrap, unwrapText } from '../api';
import { CopyButton } from '../ui/copy';
import { ErrorNotice } from '../ui/form';
import { useTitle } from '../ui/layout';
import { Loading, useLoad } from '../ui/load';
import { StatusBadge } from './activity';
import { NotFoundMessage } from './not-found';

const loadSend = (id: string) => unwrap(api.GET('/sends/{id}', { params: { path: { id } } }));
type Send = Awaited<ReturnType<typeof loadSend>>;

const when = (at: string) => new Date(at).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** The remote reply with its code, once: most replies already start with it ("250 Ok"). */
function replyOf(a: { smtp_code: number | null; reply: string | null }): string {
  if (!a.reply) return a.smtp_code === null ? '' : String(a.smtp_code);
  return a.smtp_code === null || a.reply.startsWith(String(a.smtp_code)) ? a.reply : `${a.smtp_code} ${a.reply}`;
}

/** What happened, in one sentence, from the send's status and its last attempt. */
function verdict(s: Send): string {
  const last = s.attempts.at(-1);
  const reply = last && replyOf(last) ? ` The server answered: ${replyOf(last)}` : '';
  switch (s.status) {
    case 'delivered':
      return `Delivered: ${last?.remote_host ?? 'the receiving server'} accepted it${last ? ` on ${when(last.attempted_at)}` : ''}.${reply}`;
    case 'bounced':
    case 'failed':
      return `Not delivered: ${s.status_detail ?? 'the receiving server refused it'}.${reply}`;
    case 'deferred': {
      const until = s.defer_until ? ` until ${when(s.defer_until)}` : '';
      return `Held back${until}: ${s.status_detail ?? 'a temporary failure or the warm-up cap'}. It is tried again then.`;
    }
    case 'dropped':
      return `Dropped before sending: ${s.status_detail ?? 'the recipient is suppressed'}. Nothing left Mailpath.`;
    case 'simulated':
      return 'Simulated: sent with a test key or in the sandbox, so it was built and signed but never delivered.';
    default:
      return 'Accepted and waiting for delivery: it leaves in moments.';
  }
}

/** The DKIM-Signature header of a message, unfolded, as tag → value. */
function dkimTags(raw: string): [string, string][] | undefined {
  const header = /^DKIM-Signature:((?:.*)(?:\r?\n[ \t].*)*)/im.exec(raw)?.[1];
  if (!header) return undefined;
  return header
    .replace(/\r?\n[ \t]+/g, ' ')
    .split(';')
    .map((part) => part.trim())
    .filter((part) => part.includes('='))
    .map((part) => [part.slice(0, part.indexOf('=')).trim(), part.slice(part.indexOf('=') + 1).replace(/\s+/g, '')] as [string, string]);
}

const DKIM_TAGS: Record<string, string> = {
  v: 'Version',
  a: 'Algorithm',
  d: 'Signing domain',
  s: 'Selector',
  c: 'Canonicalization',
  h: 'Signed headers',
  bh: 'Body hash',
  b: 'Signature',
  t: 'Signed at',
  i: 'Identity',
};

function Gates(props: { decisions: Record<string, unknown>[] }) {
  return (
    <div class="table-wrap">
      <table data-testid="gates">
        <caption class="visually-hidden">Decision of each gate, in the order they ran</caption>
        <thead>
          <tr>
            <th scope="col">Gate</th>
            <th scope="col">Outcome</th>
            <th scope="col">Detail</th>
          </tr>
        </thead>
        <tbody>
          {props.decisions.map((d, i) => {
            const { gate, outcome, ...rest } = d;
            return (
              <tr key={i}>
                <th scope="row">{String(gate)}</th>
                <td>
                  <span class={`badge ${outcome === 'continue' ? 'ok' : 'warning'}`}>{String(outcome)}</span>
                </td>
                <td class="mono break">{Object.keys(rest).length > 0 ? JSON.stringify(rest) : ''}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

function Timeline(props: { send: Send }) {
  const entries = [
    ...props.send.attempts.map((a) => ({
      at: a.attempted_at,
      title: `Delivery attempt: ${a.outcome}`,
      tone: a.outcome === 'delivered' ? 'ok' : a.outcome === 'deferred' ? 'warning' : 'problem',
      detail: `${[a.remote_host, a.enhanced_code, replyOf(a)].filter((x) => x !== null && x !== '').join(' · ')} (${a.duration_ms} ms)`,
    })),
    ...props.send.events.map((e) => ({
      at: e.occurred_at,
      title: `Event: ${e.type}${e.subtype ? ` (${e.subtype})` : ''}`,
      tone: e.type === 'delivered' || e.type === 'open' || e.type === 'click' ? 'ok' : e.type === 'send' ? '' : 'problem',
      detail: Object.keys(e.detail).length > 0 ? JSON.stringify(e.detail) : '',
    })),
  ].sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
  return (
    <ol class="timeline" data-testid="timeline">
      {entries.map((e, i) => (
        <li key={i} class={e.tone}>
          <time dateTime={e.at}>{when(e.at)}</time>
          <strong>{e.title}</strong>
          {e.detail && <span class="mono break">{e.detail}</span>}
        </li>
      ))}
    </ol>
  );
}

function Signed(props: { id: string }) {
  const raw = useLoad(() => unwrapText(api.GET('/sends/{id}/raw', { params: { path: { id: props.id } }, parseAs: 'text' })), [props.id]);
  return (
    <>
      <section aria-labelledby="dkim-heading">
        <h2 id="dkim-heading">DKIM signature</h2>
        <Loading state={raw} what="the signed message">
          {(message) => {
            const tags = dkimTags(message);
            if (!tags) return <p>This message carries no DKIM-Signature.</p>;
            return (
              <dl class="facts" data-testid="dkim">
                {tags.map(([tag, value]) => (
                  <div key={tag}>
                    <dt>
                      {DKIM_TAGS[tag] ?? tag} <span class="muted">({tag}=)</span>
                    </dt>
                    <dd class="mono break">
                      {tag === 't' && /^\d+$/.test(value) ? `${value} (${when(new Date(Number(value) * 1000).toISOString())})` : value}
                    </dd>
                  </div>
                ))}
              </dl>
            );
          }}
        </Loading>
      </section>
      <section aria-labelledby="raw-heading">
        <h2 id="raw-heading">Raw message</h2>
        <Loading state={raw} what="the raw message">
          {(message) => (
            <>
              <div class="actions">
                <a class="button secondary" href={`/api/v1/sends/${props.id}/raw`} download={`${props.id}.eml`}>
                  Download .eml
                </a>
                <CopyButton text={message} what="the raw message" />
              </div>
              <details>
                <summary>Show the message exactly as it left ({message.length.toLocaleString()} characters)</summary>
                <pre data-testid="raw">{message}</pre>
              </details>
            </>
          )}
        </Loading>
      </section>
    </>
  );
}

export default function Message() {
  const { params } = useRoute();
  const id = params['id'] ?? '';
  const send = useLoad(() => loadSend(id), [id]);
  useTitle(send.data ? `Message to ${send.data.to}` : 'Message');
  if (send.error instanceof ApiError && send.error.status === 404) return <NotFoundMessage />;
  if (send.error !== undefined) return <ErrorNotice error={send.error} />;
  return (
    <Loading state={send} what="the message">
      {(s) => (
        <>
          <p>
            <a href="/app/activity">← Activity</a>
          </p>
          <h1>{s.subject || '(no subject)'}</h1>
          <p class="verdict" data-testid="verdict">
            <StatusBadge status={s.status} /> {verdict(s)}
          </p>
          <dl class="facts" data-testid="envelope">
            {(
              [
                ['To', s.to],
                ['From', s.from_email],
                ['Envelope sender (bounces return here)', s.envelope.mail_from],
                ['Message-ID', s.message_id],
                ['Accepted', when(s.created_at)],
                ['Last change', when(s.updated_at)],
                ['Size', s.size_bytes === null ? 'none kept' : `${s.size_bytes.toLocaleString()} bytes`],
                ['Sent through', `${s.source}, ${s.mode === 'test' ? 'test key' : 'live'}`],
                ...(s.campaign_id ? [['Campaign', s.campaign_id]] : []),
              ] as [string, string][]
            ).map(([term, value]) => (
              <div key={term}>
                <dt>{term}</dt>
                <dd class="break">{value}</dd>
              </div>
            ))}
          </dl>
          <section aria-labelledby="timeline-heading">
            <h2 id="timeline-heading">What happened</h2>
            <Timeline send={s} />
          </section>
          <section aria-labelledby="gates-heading">
            <h2 id="gates-heading">Gate decisions</h2>
            <p class="hint">Every check a send passes before it is signed and queued, in order: one that does not continue decides its fate.</p>
            <Gates decisions={s.gate_decisions} />
          </section>
          {s.status !== 'dropped' ? <Signed id={s.id} /> : <p>A dropped send keeps no message: nothing was signed.</p>}
        </>
      )}
    </Loading>
  );
}
