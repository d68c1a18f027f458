// Checks the fields a sender gives a campaign (create, PATCH): names, one-line texts, Liquid parts parsed, addresses normalized, the target exactly one list
// or segment, and every id the tenant's own.
import type { Queryable } from '../db/connection.js';
import { normalizeEmail } from '../kernel/email.js';
import { validationError } from '../kernel/errors.js';
import { isUuid } from '../kernel/ids.js';
import { MAX_PART_BYTES, parseTemplate, type TemplatePart } from '../sending/templates/liquid.js';
import { tenantOwns, type CampaignContent } from './queries.js';

export const MAX_NAME_LENGTH = 200;
/** utm_* values, from_name: short, one line. */
export const MAX_SHORT_TEXT = 200;

/** What a request may give (absent: unchanged; null or "": cleared, except name). */
export type CampaignInput = {
  [K in keyof CampaignContent]?: K extends 'name' | 'ab_metric' | 'send_time_optimization' | 'utm_tagging' | 'track_opens' | 'track_clicks'
    ? CampaignContent[K]
    : CampaignContent[K] | null;
};

/** The values of a new campaign before the request's fields (tracking on, everything else off or empty). */
export const NEW_CAMPAIGN: Omit<CampaignContent, 'name'> = {
  subject: null,
  subject_b: null,
  preheader_text: null,
  body_html: null,
  body_text: null,
  from_email: null,
  from_name: null,
  reply_to: null,
  list_id: null,
  segment_id: null,
  template_id: null,
  ab_split_pct: null,
  ab_metric: 'open',
  send_time_optimization: false,
  utm_tagging: false,
  utm_source: null,
  utm_medium: null,
  utm_campaign: null,
  track_opens: true,
  track_clicks: true,
};

const CONTROL = /[\p{Cc}\u2028\u2029]/u;

export function checkName(input: string): string {
  const name = input.trim();
  if (!name) throw validationError('name', 'must not be blank');
  if (name.length > MAX_NAME_LENGTH) throw validationError('name', `must be at most ${MAX_NAME_LENGTH} characters once surrounding spaces are dropped`);
  if (CONTROL.test(name)) throw validationError('name', 'must not contain line breaks or control characters');
  return name;
}

/** Empty (or only spaces) counts as not set. */
const blank = (value: string | null | undefined) => value === null || value === undefined || value.trim() === '';

/** A one-line text (from_name, utm_*): trimmed, blank is null, no control characters, at most `max` characters. */
export function oneLineText(value: string | null, field: string, max: number): string | null {
  if (blank(value)) return null;
  const text = value!.trim();
  if (CONTROL.test(text)) throw validationError(field, 'must be one line without control characters');
  if (text.length > max) throw validationError(field, `must be at most ${max} characters`);
  return text;
}

/** A Liquid part: parsed now (a syntax error is 422 naming the field), stored as given. */
function liquidPart(value: string | null, field: string, part: TemplatePart): string | null {
  if (blank(value)) return null;
  if ((part === 'subject' || part === 'preheader_text') && /[\r\n]/.test(value!)) throw validationError(field, 'must be one line (no CR or LF)');
  if (Buffer.byteLength(value!, 'utf8') > MAX_PART_BYTES) throw validationError(field, `must be at most ${MAX_PART_BYTES / 1024} KiB`);
  try {
    parseTemplate(value!, part);
  } catch (err) {
    const message = (err as Error).message;
    throw validationError(field, message.startsWith(`${part}: `) ? message.slice(part.length + 2) : message);
  }
  return value;
}

const address = (value: string | null, field: string): string | null => (blank(value) ? null : normalizeEmail(value!, field));

async function ownedId(
  db: Queryable,
  tenantId: string,
  value: string | null,
  field: string,
  table: 'lists' | 'segments' | 'templates',
  what: string,
): Promise<string | null> {
  if (value === null) return null;
  if (!isUuid(value) || !(await tenantOwns(db, tenantId, table, value.toLowerCase()))) throw validationError(field, `no such ${what} in this account`);
  return value.toLowerCase();
}

/**
 * Checks the fields given and returns them in stored form. The target: a request may name a list or a segment
 * (not both, 422); naming one replaces the other; clearing it is 422 (a campaign always has exactly one target).
 */
export async function checkFields(db: Queryable, tenantId: string, input: CampaignInput): Promise<Partial<CampaignContent>> {
  const out: Partial<CampaignContent> = {};
  if (input.name !== undefined) out.name = checkName(input.name);
  if (input.subject !== undefined) out.subject = liquidPart(input.subject, 'subject', 'subject');
  if (input.subject_b !== undefined) out.subject_b = liquidPart(input.subject_b, 'subject_b', 'subject');
  if (input.preheader_text !== undefined) out.preheader_text = liquidPart(input.preheader_text, 'preheader_text', 'preheader_text');
  if (input.body_html !== undefined) out.body_html = liquidPart(input.body_html, 'body_html', 'body_html');
  if (input.body_text !== undefined) out.body_text = liquidPart(input.body_text, 'body_text', 'body_text');
  if (input.from_email !== undefined) out.from_email = address(input.from_email, 'from_email');
  if (input.reply_to !== undefined) out.reply_to = address(input.reply_to, 'reply_to');
  if (input.from_name !== undefined) out.from_name = oneLineText(input.from_name, 'from_name', MAX_SHORT_TEXT);
  for (const field of ['utm_source', 'utm_medium', 'utm_campaign'] as const) {
    if (input[field] !== undefined) out[field] = oneLineText(input[field], field, MAX_SHORT_TEXT);
  }
  for (const flag of ['send_time_optimization', 'utm_tagging', 'track_opens', 'track_clicks'] as const) {
    if (input[flag] !== undefined) out[flag] = input[flag];
  }
  if (input.ab_metric !== undefined) out.ab_metric = input.ab_metric;
  if (input.ab_split_pct !== undefined) {
    const pct = input.ab_split_pct;
    if (pct !== null && (!Number.isInteger(pct) || pct < 1 || pct > 100))
      throw validationError('ab_split_pct', 'must be an integer from 1 to 100 (or null: no A/B test)');
    out.ab_split_pct = pct;
  }
  if (input.template_id !== undefined)
    out.template_id = await ownedId(db, tenantId, blank(input.template_id) ? null : input.template_id!, 'template_id', 'templates', 'template');

  const listGiven = input.list_id !== undefined;
  const segmentGiven = input.segment_id !== undefined;
  if (listGiven && segmentGiven && input.list_id !== null && input.segment_id !== null) {
    throw validationError('list_id', 'give list_id or segment_id, not both: a campaign goes to one list or one segment');
  }
  if (
    (listGiven && input.list_id === null && !(segmentGiven && input.segment_id !== null)) ||
    (segmentGiven && input.segment_id === null && !(listGiven && input.list_id !== null))
  ) {
    throw validationError(listGiven ? 'list_id' : 'segment_id', 'cannot be cleared: a campaign always has a target (give the other one to switch)');
  }
  if (listGiven && input.list_id !== null) {
    out.list_id = await ownedId(db, tenantId, input.list_id!, 'list_id', 'lists', 'list');
    out.segment_id = null;
  } else if (segmentGiven && input.segment_id !== null) {
    out.segment_id = await ownedId(db, tenantId, input.segment_id!, 'segment_id', 'segments', 'segment');
    out.list_id = null;
  }
  return out;
}

/** A new campaign's fields: name required, exactly one of list_id / segment_id. */
export async function checkNewCampaign(db: Queryable, tenantId: string, input: CampaignInput): Promise<CampaignContent> {
  if (input.name === undefined) throw validationError('name', 'is required');
  const hasList = input.list_id !== undefined && input.list_id !== null;
  const hasSegment = input.segment_id !== undefined && input.segment_id !== null;
  if (hasList === hasSegment) throw validationError('list_id', "give exactly one of list_id or segment_id (the campaign's target)");
  const fields = await checkFields(db, tenantId, input);
  return { ...NEW_CAMPAIGN, ...fields, name: fields.name! };
}
