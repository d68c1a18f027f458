// One message of a workspace mailbox, read in the dashboard: who it is from and to, its text, its attachments' names
// and sizes, and every header. Inbound mail is anyone's: its HTML is never rendered as markup, only shown as source
// text on request (Preact writes it as text), so nothing of a sender's runs or loads here. A message of another
// mailbox (or workspace) than the address names reads as "Not found", as the API answers another workspace's.
import { useRoute } from 'preact-iso/router';
import type { paths } from '../../../clients/typescript/index';
import { ApiError, api, unwrap } from '../api';
import { ErrorNotice, Notice } from '../ui/form';
import { useTitle } from '../ui/layout';
import { Loading, useLoad } from '../ui/load';
import { NotFoundMessage } from './not-found';

type Detail = paths['/mail/messages/{id}']['get']['responses'][200]['content']['application/json']['data'];
type Address = Detail['from'][number];

/** Bytes as a person reads them. */
export const size = (bytes: number) =>
  bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / 1048576).toFixed(1)} MB`;

const person = (a: Address) => (a.name && a.address ? `${a.name} <${a.address}>` : (a.address ?? a.name ?? '—'));
const people = (list: Address[]) => (list.length === 0 ? '—' : list.map(person).join(', '));
const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : '—');

async function loadMessage(mailboxId: string, messageId: string) {
  const [mailbox, message] = await Promise.all([
    unwrap(api.GET('/mail/mailboxes/{id}', { params: { path: { id: mailboxId } } })),
    unwrap(api.GET('/mail/messages/{id}', { params: { path: { id: messageId } } })),
  ]);
  // The address names both: a message of another of the workspace's mailboxes is not this mailbox's.
  if (message.mailbox_id !== mailbox.id) throw new ApiError(404, 'not_found', 'No such message in this mailbox.');
  return { mailbox, message };
}

function Body(props: { message: Detail }) {
  const m = props.message;
  if (!m.body_parsed) {
    return (
      <Notice kind="info" title="Too large to read here">
        Only the headers of a message this large are read. Download it to read the rest.
      </Notice>
    );
  }
  return (
    <>
      {m.text !== null ? <pre data-testid="message-text">{m.text}</pre> : <p class="muted">This message has no plain-text part.</p>}
      {m.html !== null && (
        <details>
          <summary>Show the HTML part as source text ({m.html.length.toLocaleString()} characters)</summary>
          <p class="hint">Shown as text, never as a page: a sender's HTML can track, mislead or run code.</p>
          <pre data-testid="message-html">{m.html}</pre>
        </details>
      )}
    </>
  );
}

function Attachments(props: { items: Detail['attachments'] }) {
  if (props.items.length === 0)
    return (
      <p class="muted" data-testid="attachments-none">
        None.
      </p>
    );
  return (
    <div class="table-wrap">
      <table data-testid="attachments">
        <caption class="visually-hidden">Attachments</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Type</th>
            <th scope="col" class="num">
              Size
            </th>
          </tr>
        </thead>
        <tbody>
          {props.items.map((a, i) => (
            <tr key={`${i}-${a.filename ?? ''}`}>
              <td class="break">{a.filename ?? '(no name)'}</td>
              <td>{a.content_type}</td>
              <td class="num">{size(a.size)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Headers(props: { items: Detail['headers'] }) {
  return (
    <details data-testid="headers">
      <summary>Show all {props.items.length} header fields</summary>
      <div class="table-wrap">
        <table>
          <caption class="visually-hidden">Header fields, in order, as received</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Value</th>
            </tr>
          </thead>
          <tbody>
            {props.items.map((h, i) => (
              <tr key={`${i}-${h.name}`}>
                <th scope="row" class="nowrap">
                  {h.name}
                </th>
                <td class="break mono">{h.value}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </details>
  );
}

export default function InboundMessage() {
  const { params } = useRoute();
  const mailboxId = params['mailbox'] ?? '';
  const messageId = params['message'] ?? '';
  const read = useLoad(() => loadMessage(mailboxId, messageId), [mailboxId, messageId]);
  useTitle(read.data ? (read.data.message.subject ?? '(no subject)') : 'Message');
  if (read.error instanceof ApiError && read.error.status === 404) return <NotFoundMessage />;
  if (read.error !== undefined) return <ErrorNotice error={read.error} />;
  return (
    <Loading state={read} what="the message">
      {({ mailbox, message: m }) => (
        <>
          <nav aria-label="Breadcrumb" class="breadcrumb">
            <a href="/app/inbound">Inbound</a> / <a href={`/app/inbound?mailbox=${mailbox.id}`}>{mailbox.address}</a> /
          </nav>
          <h1 class="break">{m.subject ?? '(no subject)'}</h1>
          <dl class="facts" data-testid="message-facts">
            {(
              [
                ['From', people(m.from)],
                ['To', people(m.to)],
                ...(m.cc.length > 0 ? [['Cc', people(m.cc)]] : []),
                ...(m.reply_to.length > 0 ? [['Reply-To', people(m.reply_to)]] : []),
                ['Date', when(m.date)],
                ['Received', when(m.received_at)],
                ['Envelope', `from ${m.envelope.mail_from || '(null sender)'} to ${m.envelope.rcpt_to}`],
                ['Size', size(m.size_bytes)],
                ["Mailpath's check", m.authentication_results[0] ?? 'none recorded'],
              ] as [string, string][]
            ).map(([term, value]) => (
              <div key={term}>
                <dt>{term}</dt>
                <dd class="break">{value}</dd>
              </div>
            ))}
          </dl>
          <p class="hint">
            From and the other headers are the sender's claims. Mailpath records SPF, DKIM and DMARC results for inbound mail (its check, above) but does not
            refuse mail that fails them.
          </p>
          <p>
            <a href={`/api/v1/mail/messages/${m.id}/raw`} download={`${m.id}.eml`}>
              Download the message (.eml)
            </a>
          </p>
          <section aria-labelledby="body-heading">
            <h2 id="body-heading">Text</h2>
            <Body message={m} />
          </section>
          <section aria-labelledby="attachments-heading">
            <h2 id="attachments-heading">Attachments ({m.attachments.length})</h2>
            <Attachments items={m.attachments} />
          </section>
          <section aria-labelledby="headers-heading">
            <h2 id="headers-heading">Headers</h2>
            <Headers items={m.headers} />
          </section>
        </>
      )}
    </Loading>
  );
}
