// Decorates one message's HTML for its send: UTM parameters on every http(s) link, each http(s) link through a signed click redirect, and the open pixel
// before </body>.
import { applyEdits, findLinks, type HtmlEdit, type LinkSlot } from './html-links.js';
import { clickUrls, linkBase, openUrl, TRACKING_PATHS, type LinkOwner } from './link-tokens.js';
import { utmParameters, withUtm, type UtmValues } from './utm.js';

export interface DecorateInput {
  html: string;
  /** The send the message will be (acceptSend's caller-fixed sendId): every token names it. */
  sendId: string;
  /** deps.linkKey. */
  linkKey: Buffer;
  /** The send's tenant, and whether its links answer a page rather than redirect (simulated and sandbox sends). */
  owner: LinkOwner;
  /** MAILPATH_PUBLIC_URL: the origin of the pixel and redirect links. */
  publicUrl: URL;
  trackOpens: boolean;
  trackClicks: boolean;
  /** With utm_tagging, its values (empty ones are left out); undefined tags nothing. */
  utm?: UtmValues | undefined;
}

const HTTP = /^https?:\/\//i;

export interface Target {
  start: number;
  end: number;
  /** The href as written (decoded). */
  url: string;
  /** Where the link goes: the URL with UTM parameters. */
  destination: string;
}

/** What a body's tracking needs that does not depend on the send: its tracked links and their destinations, and where </body> is. */
interface Plan {
  html: string;
  /** The public base and UTM parameters the targets were made with. */
  key: string;
  targets: Target[];
  /** Distinct destinations: the link count the click tokens carry. */
  distinct: number;
  bodyClose: number;
}

/**
 * The plan of the last body seen: a campaign whose body does not change per recipient (or that repeats) is
 * tokenized and tagged once, and every further recipient costs only its tokens and one concatenation.
 */
let lastPlan: Plan | undefined;

/**
 * The links decoration changes, with where each goes: every http(s) link but our own (the unsubscribe link, tracking
 * links already in the body), its destination the URL with the UTM parameters.
 */
export function trackedTargets(links: readonly LinkSlot[], base: string, params: [string, string][]): Target[] {
  const ours = Object.values(TRACKING_PATHS).map((path) => (base + path).toLowerCase());
  const targets: Target[] = [];
  for (const link of links) {
    if (!HTTP.test(link.url)) continue;
    const lower = link.url.toLowerCase();
    if (ours.some((prefix) => lower.startsWith(prefix))) continue;
    targets.push({ ...link, destination: withUtm(link.url, params) });
  }
  return targets;
}

function planOf(html: string, base: string, params: [string, string][]): Plan {
  const key = `${base}\n${JSON.stringify(params)}`;
  if (lastPlan?.html === html && lastPlan.key === key) return lastPlan;
  const found = findLinks(html);
  const targets = trackedTargets(found.links, base, params);
  lastPlan = { html, key, targets, distinct: new Set(targets.map((t) => t.destination)).size, bodyClose: found.bodyClose };
  return lastPlan;
}

const ESCAPED = /[&"]/g;
const ESCAPED_TEST = /[&"]/;
const ENTITY: Record<string, string> = { '&': '&amp;', '"': '&quot;' };

/** Attribute values are written double-quoted: & and " escaped, the rest as is. */
export function attributeValue(value: string): string {
  return `"${value.replace(ESCAPED, (c) => ENTITY[c]!)}"`;
}

/**
 * The decorated HTML. Links that are not http(s) (mailto:, tel:, relative, #anchors) and our own links (the
 * unsubscribe link, tracking links already in the body) are left exactly as written; so is everything else of
 * the document, byte for byte. Each tracked link's token signs the send id and the destination URL (after UTM
 * tagging), so the redirect can go nowhere else.
 */
export function decorateHtml(input: DecorateInput): string {
  const { html } = input;
  const params = utmParameters(input.utm);
  const base = linkBase(input.publicUrl);
  if (params.length === 0 && !input.trackClicks && !input.trackOpens) return html;
  const edits: HtmlEdit[] = [];
  const plan = planOf(html, base, params);
  const clickUrl = input.trackClicks ? clickUrls(base, input.linkKey, input.sendId, input.owner) : undefined;
  // A click URL is the public base and a base64url token: only a base with & (or ") needs escaping.
  const plainBase = !ESCAPED_TEST.test(base);
  for (const target of plan.targets) {
    if (clickUrl) {
      const href = clickUrl(target.destination, plan.distinct);
      edits.push({ start: target.start, end: target.end, text: plainBase ? `"${href}"` : attributeValue(href) });
    } else if (target.destination !== target.url) {
      edits.push({ start: target.start, end: target.end, text: attributeValue(target.destination) });
    }
  }
  if (input.trackOpens) {
    const src = openUrl(base, input.linkKey, input.sendId);
    edits.push({ start: plan.bodyClose, end: plan.bodyClose, text: `<img src=${plainBase ? `"${src}"` : attributeValue(src)} width="1" height="1" alt="">` });
  }
  if (edits.length === 0) return html;
  // The pixel's insertion point is after every link of the body; links of a conditional comment after </body> sort in.
  return applyEdits(html, edits);
}
