// A campaign message's content, the one place it is made: the effective subject and bodies (campaign or template), parsed once per run, rendered with Liquid
// per recipient, the preheader, tracking and UTM, and the bulk-sender headers.
import { AppError, validationError } from '../kernel/errors.js';
import type { ProfileColumn } from '../audiences/contacts/fields.js';
import { parseTemplate, RENDER_LIMIT_MS, renderContext, type TemplatePart } from '../sending/templates/liquid.js';
import { itemError, overBudget, type ItemOutcome, type LiquidSource, type RenderItem, type TemplateRenderer } from '../sending/templates/renderer.js';
import type { TemplateRow } from '../sending/templates/queries.js';
import { decorateHtml } from '../engagement/tracking/decorate.js';
import type { LinkOwner } from '../engagement/tracking/link-tokens.js';
import { trackTemplate, type TrackedTemplate } from '../engagement/tracking/template-links.js';
import { unsubscribeOf } from '../engagement/tracking/unsubscribe.js';
import { DEFAULT_UTM_MEDIUM, DEFAULT_UTM_SOURCE, defaultUtmCampaign } from '../engagement/tracking/utm.js';
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
export function effectiveContent(
  campaign: Pick<CampaignRow, keyof EffectiveContent>,
  template: Pick<TemplateRow, 'subject' | 'body_html' | 'body_text'> | null,
): EffectiveContent {
  return {
    subject: given(campaign.subject) ?? given(template?.subject),
    subject_b: given(campaign.subject_b),
    preheader_text: given(campaign.preheader_text),
    body_html: given(campaign.body_html) ?? given(template?.body_html),
    body_text: given(campaign.body_text) ?? given(template?.body_text),
  };
}

/** The parts checked once (they parse), to render for every recipient of a run on the render threads. */
export interface PreparedContent {
  subject: LiquidSource;
  subjectB: LiquidSource | null;
  preheader: LiquidSource | null;
  html: LiquidSource | null;
  text: LiquidSource | null;
  /** The body_html source (what trackedContent plans the tracking of). */
  htmlSource: string | null;
  /** body_html with its tracking in place (trackedContent), when Liquid cannot change the message's links. */
  tracked?: { html: LiquidSource; plan: TrackedTemplate } | undefined;
}

/** Checks that `source` parses as `part`, naming `field` in a syntax error (subject_b is parsed like a subject). */
function parseAs(source: string, part: TemplatePart, field: string): LiquidSource {
  try {
    parseTemplate(source, part);
    return { field, part, source };
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
    throw validationError('body_html', "a campaign needs body_html, body_text or both to send (its own or its template's)");
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
 * The content with body_html's tracking decided once for the run (shared/engagement/tracking/template-links.ts): each message
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
  return plan ? { ...content, tracked: { html: parseAs(plan.source, 'body_html', 'body_html'), plan } } : content;
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
  'id' | 'name' | 'tenant_id' | 'ab_winner' | 'track_opens' | 'track_clicks' | 'utm_tagging' | 'utm_source' | 'utm_medium' | 'utm_campaign'
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
 * (RFC 8058 one-click POST) and a mailto handled by the MX, and List-Unsubscribe-Post (shared/engagement/tracking/unsubscribe.ts
 * unsubscribeOf: one token signed for 'unsubscribe' over the send id); and a Feedback-ID naming the campaign
 * and an opaque tag of the tenant for feedback-loop reports (feedback-id.ts). DKIM signs all three (shared/sending/dkim.ts).
 */
export function bulkHeaders(
  links: LinkSettings,
  sendId: string,
  campaign: Pick<CampaignRow, 'id' | 'tenant_id'>,
): { headers: Record<string, string>; url: string } {
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

/** With utm_tagging, all three are always there: the campaign's own, or the defaults (utm.ts; utm_campaign its name as a slug). */
const utmOf = (campaign: MessageSettings) =>
  campaign.utm_tagging
    ? {
        source: campaign.utm_source || DEFAULT_UTM_SOURCE,
        medium: campaign.utm_medium || DEFAULT_UTM_MEDIUM,
        campaign: campaign.utm_campaign || defaultUtmCampaign(campaign),
      }
    : undefined;

const ownerOf = (campaign: MessageSettings, links: LinkSettings): LinkOwner => ({ tenantId: campaign.tenant_id, interstitial: links.interstitial === true });

/** The HTML as sent: the preheader put in, then UTM, click redirects and the open pixel as the campaign asks (unless the template carries them). */
function finalHtml(content: PreparedContent, html: string, preheader: string, campaign: MessageSettings, sendId: string, links: LinkSettings): string {
  // The tracking was in the template (decoration and the preheader touch different places, so the order does not matter).
  if (content.tracked) return withPreheader(html, preheader);
  return decorateHtml({
    html: withPreheader(html, preheader),
    sendId,
    linkKey: links.key,
    owner: ownerOf(campaign, links),
    publicUrl: links.publicUrl,
    trackOpens: campaign.track_opens,
    trackClicks: campaign.track_clicks,
    utm: utmOf(campaign),
  });
}

/** The sources of a run's render jobs, in this order: subject, subject_b, preheader, body_html (tracked or not), body_text. */
function jobSources(content: PreparedContent): { sources: LiquidSource[]; at: Record<'subject' | 'subjectB' | 'preheader' | 'html' | 'text', number> } {
  const sources: LiquidSource[] = [];
  const add = (s: LiquidSource | null | undefined) => (s ? sources.push(s) - 1 : -1);
  const at = {
    subject: add(content.subject),
    subjectB: add(content.subjectB),
    preheader: add(content.preheader),
    html: add(content.tracked?.html ?? content.html),
    text: add(content.text),
  };
  return { sources, at };
}

/** What one recipient's message is made of besides its renders: its headers and the render job's item. */
interface MessagePlan {
  bulk: { headers: Record<string, string>; url: string };
  item: RenderItem;
}

function planMessage(input: CampaignMessageInput, at: ReturnType<typeof jobSources>['at']): MessagePlan {
  const { content, campaign, recipient, links } = input;
  const bulk = bulkHeaders(links, recipient.sendId, campaign);
  const profile = { ...recipient.contact.profile, first_name: recipient.contact.first_name, last_name: recipient.contact.last_name };
  const context = renderContext({
    variables: { ...profile, email: recipient.email, unsubscribe_url: bulk.url },
    contact: {
      email: recipient.email,
      first_name: recipient.contact.first_name,
      last_name: recipient.contact.last_name,
      custom_fields: recipient.customFields,
      profile,
    },
  });
  // With the tracking in the template, its reserved variables for this send (they win over anything of the contact's).
  const tracking = content.tracked ? content.tracked.plan.variables(links.key, recipient.sendId, ownerOf(campaign, links)) : {};
  const useB = recipient.variant === 'b' || (recipient.variant === null && campaign.ab_winner === 'b');
  const sources = [useB && at.subjectB >= 0 ? at.subjectB : at.subject, at.preheader, at.html, at.text].filter((i) => i >= 0);
  return { bulk, item: { context: { ...context, ...tracking }, sources } };
}

function finishMessage(input: CampaignMessageInput, plan: MessagePlan, outputs: string[]): CampaignMessage {
  const { content, campaign, recipient, links } = input;
  let next = 0;
  const subject = outputs[next++]!;
  if (!subject) throw validationError('subject', 'renders to an empty subject for this recipient');
  const preheader = content.preheader ? outputs[next++]! : '';
  const html = content.html ? finalHtml(content, outputs[next++]!, preheader, campaign, recipient.sendId, links) : undefined;
  const text = content.text ? outputs[next++]! : undefined;
  return { subject, html, text, headers: plan.bulk.headers, unsubscribeUrl: plan.bulk.url };
}

/** A recipient's message, or why it cannot be made: its own fault (422, skipped), or the render budget (the campaign pauses). */
export type MessageOutcome = CampaignMessage | AppError | RenderOverBudget;

/** A render stopped by a budget or limit: the template's cost, so the campaign pauses rather than skip the recipient. */
export class RenderOverBudget {
  constructor(readonly reason: string) {}
}

export interface RenderBudget {
  renderer: TemplateRenderer;
  /** The render time all these recipients may use together, in ms. */
  budgetMs: number;
  /** Recipients per job handed to a render thread. */
  itemsPerJob: number;
}

/**
 * Renders the recipients' messages on the render threads, a job of `itemsPerJob` recipients after another, within
 * one budget for all of them: once it is spent (or a limit stops a render) the rest come back RenderOverBudget.
 * Liquid sees the contact (`contact.email`, `contact.first_name`, `contact.country`, … every profile column),
 * `custom_fields.<key>`, the profile columns also at the top level (`{{ first_name | default: "there" }}`), and
 * `unsubscribe_url`. The subject is variant b's for the b half of an A/B test and for the remainder once b was declared
 * the winner; a's otherwise. The HTML then gets its tracking (click redirects and the open pixel, per track_clicks /
 * track_opens) and UTM parameters (utm_tagging); the unsubscribe link is left as is.
 */
export async function renderCampaignMessages(budget: RenderBudget, inputs: CampaignMessageInput[]): Promise<MessageOutcome[]> {
  if (inputs.length === 0) return [];
  const { sources, at } = jobSources(inputs[0]!.content);
  const tenantId = inputs[0]!.campaign.tenant_id;
  const out: MessageOutcome[] = [];
  let left = budget.budgetMs;
  for (let first = 0; first < inputs.length; first += budget.itemsPerJob) {
    const chunk = inputs.slice(first, first + budget.itemsPerJob);
    const plans = chunk.map((input) => planMessage(input, at));
    let outcomes: ItemOutcome[];
    if (left <= 0) {
      outcomes = chunk.map(() => overBudget(sources[0]!.field, budget.budgetMs));
    } else {
      const report = await budget.renderer.render({ tenantId, sources, items: plans.map((p) => p.item), budgetMs: left });
      left -= report.elapsedMs;
      outcomes = report.items;
    }
    outcomes.forEach((outcome, i) => {
      if (!outcome.ok) {
        out.push(outcome.overBudget ? new RenderOverBudget(budgetReason(outcome.message, budget.budgetMs)) : itemError(outcome));
        return;
      }
      try {
        out.push(finishMessage(chunk[i]!, plans[i]!, outcome.outputs));
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        out.push(err);
      }
    });
  }
  return out;
}

/** What a paused campaign says: the part and the limit that stopped its render, and the batch budget. */
function budgetReason(message: string, budgetMs: number): string {
  return (
    `rendering its messages exceeded the render budget (${budgetMs} ms per batch of recipients; each part at most ${RENDER_LIMIT_MS} ms): ${message}. ` +
    'Resuming renders the recipients left again (a stored template it uses may be made cheaper first), or cancel it'
  );
}

/** One recipient's message, rendered on the render threads (the seed copies' and tests' way to one message). */
export async function composeCampaignContent(budget: RenderBudget, input: CampaignMessageInput): Promise<MessageOutcome> {
  return (await renderCampaignMessages(budget, [input]))[0]!;
}
