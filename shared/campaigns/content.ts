// A campaign message's content, the one place it is made: the effective subject and bodies (campaign or template), parsed once per run, rendered with Liquid per recipient, the preheader, tracking and UTM, and the bulk-sender headers.
import { AppError, validationError } from '../errors.js';
import type { ProfileColumn } from '../contacts/fields.js';
import { parseTemplate, renderContext, renderTemplate, type ParsedTemplate, type TemplateContext, type TemplatePart } from '../templates/liquid.js';
import type { TemplateRow } from '../templates/queries.js';
import { decorateHtml } from '../tracking/decorate.js';
import type { LinkOwner } from '../tracking/link-tokens.js';
import { trackTemplate, type TrackedTemplate } from '../tracking/template-links.js';
import { unsubscribeOf } from '../tracking/unsubscribe.js';
import { feedbackId } from './feedback-id.js';
import type { CampaignRow } from './queries.js';

/** Subject, preheader and bodies after the template precedence (see effectiveContent). */
export interface EffectiveContent {
  subject: string | null;
  subject_b: string | null;
  preheader_text: string | null;
  body_html: string | null;
  body_text: string | null;
}

const given = (value: string | null | undefined): string | null => (value !== null && value !== undefined && value.trim() !== '' ? value : null);

/**
 * Each part is the campaign's own when it is set (not empty), else the template's: a template supplies the subject and
 * bodies a campaign leaves empty, part by part. subject_b and the preheader are only ever the campaign's (templates
 * have none). Without a template the campaign's own parts are all there is.
 */
export function effectiveContent(campaign: Pick<CampaignRow, keyof EffectiveContent>, template: Pick<TemplateRow, 'subject' | 'body_html' | 'body_text'> | null): EffectiveContent {
  return {
    subject: given(campaign.subject) ?? given(template?.subject),
    subject_b: given(campaign.subject_b),
    preheader_text: given(campaign.preheader_text),
    body_html: given(campaign.body_html) ?? given(template?.body_html),
    body_text: given(campaign.body_text) ?? given(template?.body_text),
  };
}

/** The parts parsed once, to render for every recipient of a run. */
export interface PreparedContent {
  subject: ParsedTemplate;
  subjectB: ParsedTemplate | null;
  preheader: ParsedTemplate | null;
  html: ParsedTemplate | null;
  text: ParsedTemplate | null;
  /** The body_html source (what trackedContent plans the tracking of). */
  htmlSource: string | null;
  /** body_html with its tracking in place (trackedContent), when Liquid cannot change the message's links. */
  tracked?: { html: ParsedTemplate; plan: TrackedTemplate } | undefined;
}

/** Parses `source` as `part`, naming `field` in a syntax error (subject_b is parsed like a subject). */
function parseAs(source: string, part: TemplatePart, field: string): ParsedTemplate {
  try {
    return parseTemplate(source, part);
  } catch (err) {
    if (err instanceof AppError && err.slug === 'validation_error' && field !== part) {
      throw validationError(field, err.message.slice(part.length + 2));
    }
    throw err;
  }
}

/**
 * Parses the effective content, refusing with 422 what cannot be sent: no subject, no body, an A/B test without
 * subject_b, a Liquid syntax error (naming the field).
 */
export function prepareContent(content: EffectiveContent, abTest: boolean): PreparedContent {
  if (content.subject === null) throw validationError('subject', 'is required to send (set it, or a template_id whose template has one)');
  if (content.body_html === null && content.body_text === null) {
    throw validationError('body_html', 'a campaign needs body_html, body_text or both to send (its own or its template\'s)');
  }
  if (abTest && content.subject_b === null) throw validationError('subject_b', 'is required to send an A/B test (ab_split_pct is set)');
  return {
    subject: parseAs(content.subject, 'subject', 'subject'),
    subjectB: content.subject_b === null ? null : parseAs(content.subject_b, 'subject', 'subject_b'),
    preheader: content.preheader_text === null ? null : parseAs(content.preheader_text, 'preheader_text', 'preheader_text'),
    html: content.body_html === null ? null : parseAs(content.body_html, 'body_html', 'body_html'),
    text: content.body_text === null ? null : parseAs(content.body_text, 'body_text', 'body_text'),
    htmlSource: content.body_html,
  };
}

/**
 * The content with body_html's tracking decided once for the run (shared/tracking/template-links.ts): each message
 * then costs its own click tokens and one render, not a parse of its HTML. Unchanged when Liquid could change the
 * message's links: every message is then decorated after rendering, as transactional mail is.
 */
export function trackedContent(content: PreparedContent, campaign: MessageSettings, links: Pick<LinkSettings, 'publicUrl'>): PreparedContent {
  if (content.htmlSource === null) return content;
  const plan = trackTemplate(content.htmlSource, {
    publicUrl: links.publicUrl,
    trackOpens: campaign.track_opens,
    trackClicks: campaign.track_clicks,
    utm: utmOf(campaign),
  });
  return plan ? { ...content, tracked: { html: parseTemplate(plan.source, 'body_html'), plan } } : content;
}

/** Where unsubscribe links point and what signs them. */
export interface LinkSettings {
  key: Buffer;
  /** MAILPATH_PUBLIC_URL. */
  publicUrl: URL;
  /** MAILPATH_HOSTNAME (the mailto unsubscribe goes to the MX). */
  hostname: string;
  /** A test-mode campaign's or a sandbox tenant's messages: their click links answer a page naming the target (link-tokens.ts). */
  interstitial?: boolean | undefined;
}

/** The recipient a message is made for. */
export interface CampaignRecipient {
  sendId: string;
  variant: 'a' | 'b' | null;
  email: string;
  contact: { first_name: string | null; last_name: string | null; profile: Partial<Record<ProfileColumn, string | null>> };
  /** The contact's custom fields of the tenant's catalog. */
  customFields: Record<string, unknown>;
}

/** The campaign settings a message depends on. */
export type MessageSettings = Pick<
  CampaignRow,
  'id' | 'tenant_id' | 'ab_winner' | 'track_opens' | 'track_clicks' | 'utm_tagging' | 'utm_source' | 'utm_medium' | 'utm_campaign'
>;

export interface CampaignMessageInput {
  content: PreparedContent;
  campaign: MessageSettings;
  recipient: CampaignRecipient;
  links: LinkSettings;
}

export interface CampaignMessage {
  subject: string;
  html: string | undefined;
  text: string | undefined;
  /** List-Unsubscribe, List-Unsubscribe-Post and Feedback-ID. */
  headers: Record<string, string>;
  /** The one-click unsubscribe URL (also `{{ unsubscribe_url }}` in Liquid). */
  unsubscribeUrl: string;
}

/**
 * The bulk-sender headers of one campaign message (Gmail's and Yahoo's rules): List-Unsubscribe with an https URL
 * (RFC 8058 one-click POST) and a mailto handled by the MX, and List-Unsubscribe-Post (shared/tracking/unsubscribe.ts
 * unsubscribeOf: one token signed for 'unsubscribe' over the send id); and a Feedback-ID naming the campaign
 * and an opaque tag of the tenant for feedback-loop reports (feedback-id.ts). DKIM signs all three (shared/sending/dkim.ts).
 */
export function bulkHeaders(links: LinkSettings, sendId: string, campaign: Pick<CampaignRow, 'id' | 'tenant_id'>): { headers: Record<string, string>; url: string } {
  const unsubscribe = unsubscribeOf({ sendId, linkKey: links.key, publicUrl: links.publicUrl, hostname: links.hostname });
  return { url: unsubscribe.url, headers: { ...unsubscribe.headers, 'Feedback-ID': feedbackId(links.key, campaign.id, campaign.tenant_id) } };
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
const BODY_OPEN = /<body\b[^>]*>/i;

/** The preheader as the hidden first text of the HTML body (what inboxes show after the subject). */
function withPreheader(html: string, preheader: string): string {
  if (!preheader) return html;
  const block = `<div style="display:none;max-height:0;overflow:hidden;mso-hide:all" aria-hidden="true">${escapeHtml(preheader)}</div>`;
  const open = BODY_OPEN.exec(html);
  if (!open) return block + html;
  const at = open.index + open[0].length;
  return html.slice(0, at) + block + html.slice(at);
}

const utmOf = (campaign: MessageSettings) =>
  campaign.utm_tagging ? { source: campaign.utm_source, medium: campaign.utm_medium, campaign: campaign.utm_campaign } : undefined;

const ownerOf = (campaign: MessageSettings, links: LinkSettings): LinkOwner => ({ tenantId: campaign.tenant_id, interstitial: links.interstitial === true });

/** The HTML as sent: rendered, the preheader put in, then UTM, click redirects and the open pixel as the campaign asks. */
function finalHtml(content: PreparedContent, context: TemplateContext, preheader: string, campaign: MessageSettings, sendId: string, links: LinkSettings): string {
  if (content.tracked) {
    // The tracking is in the template: its variables for this send, then the preheader (decoration and the preheader
    // touch different places, so the order does not matter).
    const tracking = content.tracked.plan.variables(links.key, sendId, ownerOf(campaign, links));
    return withPreheader(renderTemplate(content.tracked.html, { ...context, ...tracking }), preheader);
  }
  return decorateHtml({
    html: withPreheader(renderTemplate(content.html!, context), preheader),
    sendId,
    linkKey: links.key,
    owner: ownerOf(campaign, links),
    publicUrl: links.publicUrl,
    trackOpens: campaign.track_opens,
    trackClicks: campaign.track_clicks,
    utm: utmOf(campaign),
  });
}

/**
 * Renders one recipient's message. Liquid sees the contact (`contact.email`, `contact.first_name`, `contact.country`,
 * … every profile column), `custom_fields.<key>`, the profile columns also at the top level (`{{ first_name |
 * default: "there" }}`), and `unsubscribe_url`. The subject is variant b's for the b half of an A/B test and for
 * the remainder once b was declared the winner; a's otherwise. The HTML then gets its tracking (click redirects and
 * the open pixel, per track_clicks / track_opens) and UTM parameters (utm_tagging); the unsubscribe link is left
 * as is. A render failure is a 422 naming the part.
 */
export function composeCampaignContent(input: CampaignMessageInput): CampaignMessage {
  const { content, campaign, recipient, links } = input;
  const bulk = bulkHeaders(links, recipient.sendId, campaign);
  const profile = { ...recipient.contact.profile, first_name: recipient.contact.first_name, last_name: recipient.contact.last_name };
  const context = renderContext({
    variables: { ...profile, email: recipient.email, unsubscribe_url: bulk.url },
    contact: { email: recipient.email, first_name: recipient.contact.first_name, last_name: recipient.contact.last_name, custom_fields: recipient.customFields, profile },
  });
  const useB = recipient.variant === 'b' || (recipient.variant === null && campaign.ab_winner === 'b');
  const subject = renderTemplate(useB && content.subjectB ? content.subjectB : content.subject, context);
  if (!subject) throw validationError('subject', 'renders to an empty subject for this recipient');
  const preheader = content.preheader ? renderTemplate(content.preheader, context) : '';
  return {
    subject,
    html: content.html ? finalHtml(content, context, preheader, campaign, recipient.sendId, links) : undefined,
    text: content.text ? renderTemplate(content.text, context) : undefined,
    headers: bulk.headers,
    unsubscribeUrl: bulk.url,
  };
}
