// Parses delivery status notifications: RFC 3464 multipart/report (report-type=delivery-status) per-message and per-recipient fields (plain-text bounces:
// plain-bounce.ts).
import type { ParsedMail } from 'mailparser';
import { bareAddress } from './addresses.js';
import { field, fieldGroups, originalHeaders, partOf, partText, tidyReply, typedValue, type FieldGroup, type OriginalHeaders } from './mime.js';

export const DSN_ACTIONS = ['failed', 'delayed', 'delivered', 'relayed', 'expanded'] as const;
export type DsnAction = (typeof DSN_ACTIONS)[number];

/** One recipient of a DSN: what happened to the message for that address. */
export interface DsnRecipient {
  /** Final-Recipient (the address the reporting MTA tried), lower-cased; null when not given. */
  recipient: string | null;
  /** Original-Recipient (the address as first given, before forwarding), when given. */
  original_recipient: string | null;
  action: DsnAction;
  /** The RFC 3463 status code (5.1.1). */
  status: string | null;
  /** Diagnostic-Code without its type: usually the remote SMTP reply ("550 5.1.1 User unknown"). */
  diagnostic: string | null;
  /** Remote-MTA without its type: the host that gave the diagnostic. */
  remote_mta: string | null;
}

export interface Dsn {
  /** false: read from a plain-text bounce (no delivery-status part), best effort. */
  standard: boolean;
  reporting_mta: string | null;
  arrival_date: string | null;
  recipients: DsnRecipient[];
  /** The headers of the message the DSN returns, when it quotes it. */
  original: OriginalHeaders | null;
}

export const DELIVERY_STATUS_TYPES = ['message/delivery-status', 'message/global-delivery-status'];

const STATUS = /^([245])\.(\d{1,3})\.(\d{1,3})\b/;

/** A status code in canonical form (5.01.001 → 5.1.1), or null. */
export function statusCode(value: string | null): string | null {
  const match = value === null ? null : STATUS.exec(value.trim());
  return match ? `${match[1]}.${Number(match[2])}.${Number(match[3])}` : null;
}

/** The DSN of a message's delivery-status part; undefined when it has none naming a recipient. */
export async function parseDsn(mail: ParsedMail): Promise<Dsn | undefined> {
  const part = partOf(mail, DELIVERY_STATUS_TYPES);
  if (!part) return undefined;
  const parsed = parseDeliveryStatus(partText(part));
  return parsed.recipients.length > 0 ? { standard: true, ...parsed, original: await originalHeaders(mail) } : undefined;
}

/** The fields of a message/delivery-status body: the per-message group, then one group per recipient. */
export function parseDeliveryStatus(text: string): Pick<Dsn, 'reporting_mta' | 'arrival_date' | 'recipients'> {
  const groups = fieldGroups(text);
  // The per-message group comes first; a malformed report may leave it out.
  const perMessage = groups[0] && !isRecipientGroup(groups[0]) ? groups.shift() : undefined;
  return {
    reporting_mta: typedValue(field(perMessage, 'reporting-mta')),
    arrival_date: field(perMessage, 'arrival-date'),
    recipients: groups.filter(isRecipientGroup).flatMap((g) => {
      const r = recipientOf(g);
      return r ? [r] : [];
    }),
  };
}

function isRecipientGroup(group: FieldGroup): boolean {
  return group.has('final-recipient') || group.has('original-recipient') || group.has('action');
}

function recipientOf(group: FieldGroup): DsnRecipient | undefined {
  const status = statusCode(field(group, 'status'));
  const action = actionOf(field(group, 'action'), status);
  if (!action) return undefined;
  return {
    recipient: bareAddress(typedValue(field(group, 'final-recipient'))) ?? null,
    original_recipient: bareAddress(typedValue(field(group, 'original-recipient'))) ?? null,
    action,
    status,
    diagnostic: diagnosticOf(typedValue(field(group, 'diagnostic-code'))),
    remote_mta: typedValue(field(group, 'remote-mta')),
  };
}

function diagnosticOf(value: string | null): string | null {
  return value === null ? null : tidyReply(value);
}

/** The action named (its first word: some MTAs add a comment), or one implied by the status class when it is missing or unknown. */
function actionOf(value: string | null, status: string | null): DsnAction | undefined {
  const word = value
    ?.trim()
    .split(/[\s(;]/)[0]
    ?.toLowerCase();
  if (word && (DSN_ACTIONS as readonly string[]).includes(word)) return word as DsnAction;
  if (status?.startsWith('5')) return 'failed';
  if (status?.startsWith('4')) return 'delayed';
  if (status?.startsWith('2')) return 'delivered';
  return undefined;
}
