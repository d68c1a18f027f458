// The activity feed's search box: `to:`, `from:`, `status:`, `campaign:`, `before:`, `after:` and free text, parsed into
// GET /sends's query parameters. A value may be quoted ("a b"); an unknown status or an unreadable date is an error named
// to the user rather than silently dropped, so a search never shows more than was asked for.

export const STATUSES = ['queued', 'deferred', 'dropped', 'simulated', 'sending', 'delivered', 'bounced', 'failed'] as const;
type Status = (typeof STATUSES)[number];

export interface SendQuery {
  recipient?: string;
  from?: string;
  status?: Status;
  campaign_id?: string;
  since?: string;
  until?: string;
  q?: string;
}

export type Parsed = { ok: true; query: SendQuery } | { ok: false; error: string };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A date (YYYY-MM-DD, as midnight UTC) or a full timestamp, as RFC 3339 UTC; undefined when unreadable. */
function instant(value: string): string | undefined {
  const at = /^\d{4}-\d{2}-\d{2}$/.test(value) ? Date.parse(`${value}T00:00:00Z`) : Date.parse(value);
  return Number.isNaN(at) ? undefined : new Date(at).toISOString();
}

/** Words and key:value pairs, a quoted part kept whole: `to:"a b" hello` → ['to:a b', 'hello']. */
function tokens(text: string): string[] {
  const out: string[] = [];
  for (const match of text.matchAll(/(\S+?:)?"([^"]*)"|\S+/g))
    out.push(match[1] !== undefined || match[2] !== undefined ? `${match[1] ?? ''}${match[2]}` : match[0]);
  return out;
}

export function parseSearch(text: string): Parsed {
  const query: SendQuery = {};
  const words: string[] = [];
  for (const token of tokens(text.trim())) {
    const colon = token.indexOf(':');
    const key = colon > 0 ? token.slice(0, colon).toLowerCase() : '';
    const value = colon > 0 ? token.slice(colon + 1) : token;
    switch (key) {
      case 'to':
        query.recipient = value;
        break;
      case 'from':
        query.from = value;
        break;
      case 'status': {
        const status = value.toLowerCase();
        if (!(STATUSES as readonly string[]).includes(status)) return { ok: false, error: `status: is one of ${STATUSES.join(', ')}` };
        query.status = status as Status;
        break;
      }
      case 'campaign':
        if (!UUID.test(value)) return { ok: false, error: "campaign: takes the campaign's id" };
        query.campaign_id = value.toLowerCase();
        break;
      case 'before':
      case 'after': {
        const at = instant(value);
        if (!at) return { ok: false, error: `${key}: takes a date (2026-12-01) or a time (2026-12-01T09:30Z)` };
        if (key === 'before') query.until = at;
        else query.since = at;
        break;
      }
      default:
        // Not one of ours (a URL, a time in the subject): the whole token is text to find.
        words.push(token);
    }
  }
  if (words.length > 0) query.q = words.join(' ');
  return { ok: true, query };
}
