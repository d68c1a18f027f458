// Builds the RFC 5322 message of an outbound send (Message-ID at our host, Date, multipart/alternative): the simple shape in one pass (simple-message.ts),
// anything else with nodemailer's composer.
import MailComposer from 'nodemailer/lib/mail-composer';
import type MimeNode from 'nodemailer/lib/mime-node';
import { Encoder as Base64Encoder } from 'nodemailer/lib/base64';
import { Encoder as QpEncoder } from 'nodemailer/lib/qp';
import type { OutboundContent } from './outbound-content.js';
import { simpleMessage } from './simple-message.js';

export type { OutboundAttachment, OutboundContent } from './outbound-content.js';

/** The message bytes, CRLF line ends, ready to be DKIM-signed. */
export function composeMessage(c: OutboundContent): Promise<Buffer> {
  // Text and/or HTML without attachments (every campaign message, most transactional ones) is built in one pass.
  const simple = c.attachments?.length ? undefined : simpleMessage(c);
  return simple ? Promise.resolve(simple) : nodemailerBuild(c);
}

/** The message as nodemailer's composer builds it (in memory when every part is at hand, else streamed). */
export function nodemailerBuild(c: OutboundContent): Promise<Buffer> {
  const mail = mimeTree(c);
  const bytes = buildInMemory(mail);
  if (bytes) return Promise.resolve(bytes);
  return streamedBuild(mail);
}

/** nodemailer's MIME tree of the message: the one place the send's content maps to the composer's options. */
export function mimeTree(c: OutboundContent): MimeNode {
  const mail = new MailComposer({
    from: c.from.name ? { name: c.from.name, address: c.from.address } : c.from.address,
    to: c.to,
    ...(c.replyTo ? { replyTo: c.replyTo } : {}),
    subject: c.subject,
    ...(c.text !== undefined ? { text: c.text } : {}),
    ...(c.html !== undefined ? { html: c.html } : {}),
    ...(c.headers ? { headers: c.headers } : {}),
    ...(c.attachments ? { attachments: c.attachments } : {}),
    messageId: `<${c.messageId}>`,
    date: c.date,
    // Our own envelope is set at delivery; the composer must not invent one from the headers.
    envelope: { from: c.from.address, to: [c.to] },
  }).compile();
  mail.keepBcc = false;
  return mail;
}

/** nodemailer's own streaming build of a tree (what the in-memory build stands in for). */
export function streamedBuild(mail: MimeNode): Promise<Buffer> {
  return new Promise((resolve, reject) => mail.build((err, message) => (err ? reject(err) : resolve(message))));
}

/** The parts of a node the in-memory build reads (set by nodemailer, some only once the headers are built). */
interface NodeInternals {
  content?: unknown;
  _raw?: unknown;
  _transforms: unknown[];
  _processFuncs: unknown[];
  newline?: string | undefined;
  childNodes: MimeNode[];
  contentType?: string | undefined;
  multipart?: string | false | undefined;
  boundary?: string | false | undefined;
}

/** A string or Buffer body (what the send path composes): anything else (streams, files, URLs) takes the streaming build. */
const inMemory = (node: NodeInternals): boolean =>
  !node._raw &&
  node._transforms.length === 0 &&
  node._processFuncs.length === 0 &&
  !node.newline &&
  (node.content === undefined || node.content === null || typeof node.content === 'string' || Buffer.isBuffer(node.content)) &&
  node.childNodes.every((child) => inMemory(child as unknown as NodeInternals));

/** Runs one of nodemailer's encoder transforms over a whole body at once, collecting what it pushes. */
function encodeWhole(encoder: QpEncoder | Base64Encoder, body: Buffer, out: Buffer[]): void {
  encoder.push = (chunk: unknown, encoding?: BufferEncoding) => {
    if (chunk !== null) out.push(typeof chunk === 'string' ? Buffer.from(chunk, encoding ?? 'utf8') : (chunk as Buffer));
    return true;
  };
  const fail = (err?: Error | null) => {
    if (err) throw err;
  };
  encoder._transform(body, 'buffer' as BufferEncoding, fail);
  encoder._flush(fail);
}

/**
 * The bytes nodemailer's streaming build (MimeNode.stream) writes for this node, built in one go: its headers, its
 * body through the same encoder, then its children between the same boundary lines. The streaming build costs a
 * pipeline of streams and an event-loop turn per part, more than the rest of composing a message.
 */
function writeNode(node: MimeNode, out: Buffer[]): void {
  const n = node as unknown as NodeInternals;
  out.push(Buffer.from(`${node.buildHeaders()}\r\n\r\n`));
  if (n.content) {
    // buildHeaders has just worked it out (getTransferEncoding scans the whole body) and set the header to it.
    const transferEncoding = String(node.getHeader('Content-Transfer-Encoding') ?? '').toLowerCase();
    const body = typeof n.content === 'string' ? Buffer.from(n.content) : (n.content as Buffer);
    if (transferEncoding === 'base64') encodeWhole(new Base64Encoder(), body, out);
    // Outside text a lone CR or LF is data: encoded so nothing turns it into a line break (as MimeNode does).
    else if (transferEncoding === 'quoted-printable') encodeWhole(new QpEncoder({ binary: !/^text\//i.test(n.contentType ?? '') }), body, out);
    else out.push(body);
  }
  if (!n.multipart) return;
  n.childNodes.forEach((child, i) => {
    out.push(Buffer.from(`${i > 0 ? '\r\n' : ''}--${n.boundary}\r\n`));
    writeNode(child, out);
  });
  out.push(Buffer.from(`\r\n--${n.boundary}--\r\n`));
}

/** The whole message built in memory, or undefined when some part needs the streaming build. */
function buildInMemory(root: MimeNode): Buffer | undefined {
  if (!inMemory(root as unknown as NodeInternals)) return undefined;
  const out: Buffer[] = [];
  writeNode(root, out);
  // As nodemailer's LastNewline: the message ends with a line break.
  const last = out.findLast((chunk) => chunk.length > 0);
  const lastByte = last?.[last.length - 1];
  if (lastByte !== 0x0a) out.push(Buffer.from(lastByte === 0x0d ? '\n' : '\r\n'));
  return Buffer.concat(out);
}
