// Parses abuse feedback reports (ARF, RFC 5965: multipart/report; report-type=feedback-report): the machine-readable report and the headers of the reported
// message.
import type { ParsedMail } from 'mailparser';
import { bareAddress } from './addresses.js';
import { field, fieldGroups, originalHeaders, partOf, partText, type OriginalHeaders } from './mime.js';

export const FEEDBACK_REPORT_TYPE = 'message/feedback-report';

/**
 * Feedback types that mean the recipient (or their provider) calls the mail unwanted. Not among
 * them: not-spam (RFC 6430, the opposite) and auth-failure (RFC 6591, a DMARC/SPF/DKIM failure
 * report, which says nothing about the recipient's wishes).
 */
export const COMPLAINT_TYPES = ['abuse', 'fraud', 'virus', 'other'] as const;

export interface ArfReport {
  /** Lower-cased; null when the report does not say. */
  feedback_type: string | null;
  user_agent: string | null;
  version: string | null;
  /** The envelope sender of the reported message: our VERP address when the provider keeps it. */
  original_mail_from: string | null;
  /** Envelope recipients of the reported message (often redacted or absent). */
  original_rcpt_to: string[];
  arrival_date: string | null;
  source_ip: string | null;
  reported_domain: string[];
  /** The reported message's headers (the report's third part). */
  original: OriginalHeaders | null;
}

/** The feedback report a message carries, or undefined when it has no message/feedback-report part. */
export async function parseArf(mail: ParsedMail): Promise<ArfReport | undefined> {
  const part = partOf(mail, [FEEDBACK_REPORT_TYPE]);
  if (!part) return undefined;
  const fields = fieldGroups(partText(part));
  // One group per RFC 5965; a stray blank line must not hide the rest.
  const group = new Map<string, string[]>();
  for (const g of fields) for (const [name, values] of g) group.set(name, [...(group.get(name) ?? []), ...values]);
  const all = (name: string) => group.get(name) ?? [];
  return {
    feedback_type: field(group, 'feedback-type')?.toLowerCase() ?? null,
    user_agent: field(group, 'user-agent'),
    version: field(group, 'version'),
    original_mail_from: bareAddress(field(group, 'original-mail-from')) ?? null,
    original_rcpt_to: all('original-rcpt-to').flatMap((v) => {
      const address = bareAddress(v);
      return address ? [address] : [];
    }),
    // Arrival-Date per RFC 5965; Received-Date in reports written before it.
    arrival_date: field(group, 'arrival-date') ?? field(group, 'received-date'),
    source_ip: field(group, 'source-ip'),
    reported_domain: all('reported-domain'),
    original: await originalHeaders(mail),
  };
}

/** Whether the report is a complaint (see COMPLAINT_TYPES). */
export function isComplaint(report: ArfReport): boolean {
  return report.feedback_type !== null && (COMPLAINT_TYPES as readonly string[]).includes(report.feedback_type);
}
