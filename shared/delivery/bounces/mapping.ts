// Maps a report to the send it is about: the signed VERP address it was mailed to, else the VERP envelope sender or the Message-ID of the original it quotes.
import type { Sql } from '../../db/connection.js';
import { findReportSend, findReportSendsByMessageId, type BounceMail, type ReportSend } from './queries.js';
import { sendIdOfBounce } from '../../sending/outbound-log/verp.js';
import { looksLikeVerp } from './addresses.js';
import type { Report } from './report.js';

export type MappedBy = 'verp' | 'original_mail_from' | 'return_path' | 'message_id';

export type Mapping =
  | { result: 'send'; send: ReportSend; by: MappedBy }
  /** forged: a VERP-shaped address with a wrong signature; ambiguous: a Message-ID several sends share. */
  | { result: 'none'; outcome: 'forged' | 'unmapped' | 'ambiguous' };

export interface MappingDeps {
  sql: Sql;
  verpKey: Buffer;
  hostname: string;
}

/**
 * The send a report is about. Mail to a VERP address maps by its signature alone: a forged
 * signature maps nothing, however convincing the report inside. Mail to the feedback-loop address
 * (or to any other address the MX files as bounce mail) falls back to what the quoted original says: a
 * signed VERP envelope sender first (exact), then its Message-ID, narrowed by the reported
 * recipients when several sends share it; still ambiguous, it maps nothing.
 */
export async function mapReport(deps: MappingDeps, mail: BounceMail, report: Report): Promise<Mapping> {
  if (looksLikeVerp(mail.recipient, deps.hostname)) {
    const id = sendIdOfBounce(deps.verpKey, mail.recipient, deps.hostname);
    if (id === undefined) return { result: 'none', outcome: 'forged' };
    const send = await findReportSend(deps.sql, id);
    // A signed address of a send since deleted (with its tenant): nothing else may stand in for it.
    return send ? { result: 'send', send, by: 'verp' } : { result: 'none', outcome: 'unmapped' };
  }
  // The feedback-loop address (or whatever else the MX filed as bounce mail): only the contents can name a send.
  if (report.kind === 'unknown') return { result: 'none', outcome: 'unmapped' };
  const original = report.kind === 'arf' ? report.arf.original : report.dsn.original;
  const envelopeSenders: [MappedBy, string | null | undefined][] = [
    ['original_mail_from', report.kind === 'arf' ? report.arf.original_mail_from : null],
    ['return_path', original?.return_path],
  ];
  for (const [by, address] of envelopeSenders) {
    const id = address ? sendIdOfBounce(deps.verpKey, address, deps.hostname) : undefined;
    const send = id ? await findReportSend(deps.sql, id) : undefined;
    if (send) return { result: 'send', send, by };
  }
  const messageId = original?.message_id;
  if (!messageId) return { result: 'none', outcome: 'unmapped' };
  const sends = await findReportSendsByMessageId(deps.sql, messageId);
  if (sends.length === 0) return { result: 'none', outcome: 'unmapped' };
  if (sends.length === 1) return { result: 'send', send: sends[0]!, by: 'message_id' };
  const recipients = reportedRecipients(report);
  const narrowed = recipients.length > 0 ? await findReportSendsByMessageId(deps.sql, messageId, recipients) : [];
  return narrowed.length === 1 ? { result: 'send', send: narrowed[0]!, by: 'message_id' } : { result: 'none', outcome: 'ambiguous' };
}

/** The recipient addresses a report names (envelope, DSN fields, the original's To), lower-cased. */
function reportedRecipients(report: Exclude<Report, { kind: 'unknown' }>): string[] {
  const found =
    report.kind === 'arf'
      ? [...report.arf.original_rcpt_to, ...(report.arf.original?.to ?? [])]
      : [...report.dsn.recipients.flatMap((r) => [r.recipient, r.original_recipient]), ...(report.dsn.original?.to ?? [])];
  return [...new Set(found.filter((a): a is string => typeof a === 'string' && a.includes('@')))];
}
