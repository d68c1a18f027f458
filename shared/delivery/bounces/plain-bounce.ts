// Best-effort reading of bounces without a delivery-status part (qmail, Exim, old Yahoo "failure notice" texts): the failed address, the SMTP reply and
// whether the sender gave up.
import type { ParsedMail } from 'mailparser';
import { bareAddress } from './addresses.js';
import type { Dsn, DsnRecipient } from './dsn.js';
import { originalHeaders, quotedOriginal, tidyReply } from './mime.js';

// Only mail that presents itself as a bounce is read as one: an auto-reply quoting "550" must not bounce anyone.
const BOUNCE_SENDER = /^(mailer-daemon|mailer_daemon|mail-daemon|postmaster)@/i;
// One alternation, written in two pieces to fit the line width.
const BOUNCE_SUBJECT = new RegExp(
  `(${[
    /undeliver|failure notice|delivery (status notification|failure|failed|has failed|problem|notification)|returned mail|returning message/.source,
    /mail delivery (failed|failure|system|subsystem)|non[- ]?delivery|could not be delivered|warning: message .* delayed|delayed mail/.source,
  ].join('|')})`,
  'i',
);
// In a bounce whose last reply was temporary: the sender gave up (failed) rather than still trying (delayed).
const GAVE_UP = /(permanent(ly)? (error|failure|fatal)|giving up|given up|gave up|failed permanently|retry timeout exceeded|too long in the queue)/i;
// Bodies past this are not read: the report is at the top.
const MAX_TEXT = 64 * 1024;

interface Reply {
  code: number;
  status: string | null;
  text: string;
  line: number;
}

/** A plain-text bounce read as a DSN (standard: false); undefined when the message does not look like a bounce or names no SMTP failure. */
export async function parsePlainBounce(mail: ParsedMail, envelope: { mailFrom: string }): Promise<Dsn | undefined> {
  const recipients = plainBounce(mail, envelope);
  if (recipients.length === 0) return undefined;
  const original = (await originalHeaders(mail)) ?? quotedOriginal(mail.text ?? '');
  return { standard: false, reporting_mta: null, arrival_date: null, recipients, original };
}

/** The recipients a plain-text bounce reports, or [] when the message does not look like a bounce or names no SMTP failure. */
function plainBounce(mail: ParsedMail, envelope: { mailFrom: string }): DsnRecipient[] {
  const from = mail.from?.value[0]?.address ?? '';
  const looksLikeBounce =
    BOUNCE_SENDER.test(from) || BOUNCE_SUBJECT.test(mail.subject ?? '') || (envelope.mailFrom === '' && BOUNCE_SUBJECT.test(mail.text ?? ''));
  if (!looksLikeBounce) return [];
  const lines = (mail.text ?? '').slice(0, MAX_TEXT).replace(/\r\n?/g, '\n').split('\n');
  const reply = findReply(lines);
  const qmailStatus = /\(#([45]\.\d{1,3}\.\d{1,3})\)/.exec(lines.join('\n'))?.[1] ?? null;
  const status = reply?.status ?? qmailStatus;
  const cls = reply ? Math.floor(reply.code / 100) : status ? Number(status[0]) : undefined;
  if (cls === undefined) return [];
  const body = lines.join('\n');
  return [
    {
      recipient: recipientOf(lines, reply) ?? null,
      original_recipient: null,
      action: cls === 5 || GAVE_UP.test(body) ? 'failed' : 'delayed',
      status,
      diagnostic: reply?.text ?? null,
      remote_mta: remoteMta(body),
    },
  ];
}

/**
 * The first SMTP reply in the text: a line with a basic and an enhanced code (550 5.1.1 …, 550-5.1.1 …),
 * else one with a basic code where a reply is introduced ("said:", "error:") or opening the line.
 * A multi-line reply (550-… / 550 …) is joined.
 */
function findReply(lines: string[]): Reply | undefined {
  const withEnhanced = /\b([45]\d\d)[ -]([45])\.(\d{1,3})\.(\d{1,3})\b/;
  const introduced = /(?:^\s*|(?:said|error|reply|response|answer)[^:]{0,40}:\s*)([45]\d\d)(?:[ -]|:\s)(\S.*)$/i;
  for (const pass of [withEnhanced, introduced]) {
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      const match = pass.exec(line);
      if (!match) continue;
      const code = Number(match[1]);
      const status = pass === withEnhanced && match[2] === String(code)[0] ? `${match[2]}.${Number(match[3])}.${Number(match[4])}` : null;
      if (pass === withEnhanced && status === null) continue;
      const start = line.indexOf(match[1]!, match.index);
      const parts = [line.slice(start).trim()];
      // Continuation lines of a multi-line reply repeat the code.
      for (let j = i + 1; j < lines.length && new RegExp(`^\\s*${code}[ -]`).test(lines[j]!); j++) parts.push(lines[j]!.trim());
      return { code, status, text: tidyReply(parts.join(' ')), line: i };
    }
  }
  return undefined;
}

/** qmail's "<ann@example.org>:" line, the address after Exim's "failed:" line, else an address in the reply. */
function recipientOf(lines: string[], reply: Reply | undefined): string | undefined {
  for (const line of lines) {
    const qmail = /^\s*<([^<>\s]+@[^<>\s]+)>:\s*$/.exec(line);
    if (qmail) return qmail[1]!.toLowerCase();
  }
  const failed = lines.findIndex((l) => /address(\(es\)|es)? failed:\s*$/i.test(l) || /following (address|recipient)(\(s\)|es|s)?[^:]*:\s*$/i.test(l));
  if (failed >= 0) {
    const next = lines.slice(failed + 1).find((l) => l.trim() !== '');
    const address = bareAddress(next);
    if (address) return address;
  }
  return reply ? bareAddress(reply.text) : undefined;
}

/** Exim's "host mx.example.org [192.0.2.1]" or qmail's "Connected to 192.0.2.1 but". */
function remoteMta(text: string): string | null {
  const exim = /\bhost ([a-z0-9][a-z0-9.-]*\.[a-z0-9-]+)\s*\[([0-9a-f:.]+)\]/i.exec(text);
  if (exim) return `${exim[1]} [${exim[2]}]`;
  const qmail = /\bConnected to ([0-9a-f:.]+) but\b/i.exec(text);
  return qmail ? qmail[1]! : null;
}
