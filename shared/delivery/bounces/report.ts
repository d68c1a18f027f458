// Tells what a message sent to a bounce address is: a delivery status notification, an abuse feedback report, or something else (an auto-reply, spam).
import { parseArf, type ArfReport } from './arf.js';
import { parseDsn, type Dsn } from './dsn.js';
import { parseMail } from './mime.js';
import { parsePlainBounce } from './plain-bounce.js';

export type Report =
  | { kind: 'dsn'; dsn: Dsn }
  | { kind: 'arf'; arf: ArfReport }
  /** Not a report we read; `reason` says why, for the log. */
  | { kind: 'unknown'; reason: string };

/**
 * Reads a stored message. The report-type parameter decides when present; otherwise the parts do
 * (a feedback-report part first: some providers send ARF as plain multipart/mixed). Never throws
 * on malformed mail: that is an unknown report.
 */
export async function readReport(raw: Buffer, envelope: { mailFrom: string }): Promise<Report> {
  try {
    const mail = await parseMail(raw);
    const arf = await parseArf(mail);
    if (arf) return { kind: 'arf', arf };
    // A delivery-status part decides; failing that, a best-effort reading of a plain-text bounce.
    const dsn = (await parseDsn(mail)) ?? (await parsePlainBounce(mail, envelope));
    if (dsn) return { kind: 'dsn', dsn };
    const type = mail.headers.get('content-type') as { value?: string; params?: Record<string, string> } | undefined;
    const reportType = type?.params?.['report-type'];
    return {
      kind: 'unknown',
      reason: reportType
        ? `a multipart/report of type ${reportType} without a readable report part`
        : `neither a DSN, a plain-text bounce nor a feedback report (subject: ${JSON.stringify((mail.subject ?? '').slice(0, 80))})`,
    };
  } catch (err) {
    // Retrying cannot make malformed mail readable.
    return { kind: 'unknown', reason: `unreadable MIME: ${(err as Error).message}` };
  }
}
