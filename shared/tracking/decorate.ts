// Decorates one message's HTML for its send: UTM parameters on every http(s) link, each http(s) link through a signed click redirect, and the open pixel before </body>.
import { findLinks, type HtmlLinks } from './html-links.js';
import { clickUrl, linkBase, openUrl, TRACKING_PATHS } from './link-tokens.js';
import { utmParameters, withUtm, type UtmValues } from './utm.js';

export interface DecorateInput {
  html: string;
  /** The send the message will be (acceptSend's caller-fixed sendId): every token names it. */
  sendId: string;
  /** deps.linkKey. */
  linkKey: Buffer;
  /** MAILPATH_PUBLIC_URL: the origin of the pixel and redirect links. */
  publicUrl: URL;
  trackOpens: boolean;
  trackClicks: boolean;
  /** With utm_tagging, its values (empty ones are left out); undefined tags nothing. */
  utm?: UtmValues | undefined;
}

const HTTP = /^https?:\/\//i;

/**
 * The message's links found once per distinct HTML: a campaign whose body does not change per recipient
 * (or that repeats) is tokenized once, and every further recipient costs only its tokens and one concatenation.
 */
let lastParsed: { html: string; links: HtmlLinks } | undefined;

function linksOf(html: string): HtmlLinks {
  if (lastParsed?.html !== html) lastParsed = { html, links: findLinks(html) };
  return lastParsed.links;
}

/** Attribute values are written double-quoted: & and " escaped, the rest as is. */
function attributeValue(value: string): string {
  return `"${value.replace(/&/g, '&amp;').replace(/"/g, '&quot;')}"`;
}

interface Edit {
  start: number;
  end: number;
  text: string;
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
  const ours = Object.values(TRACKING_PATHS).map((path) => (base + path).toLowerCase());
  const edits: Edit[] = [];

  if (params.length > 0 || input.trackClicks) {
    const found = linksOf(html).links;
    const targets: { start: number; end: number; url: string; destination: string }[] = [];
    for (const link of found) {
      if (!HTTP.test(link.url)) continue;
      const lower = link.url.toLowerCase();
      if (ours.some((prefix) => lower.startsWith(prefix))) continue;
      targets.push({ ...link, destination: withUtm(link.url, params) });
    }
    const distinct = new Set(targets.map((t) => t.destination)).size;
    for (const target of targets) {
      const href = input.trackClicks ? clickUrl(base, input.linkKey, input.sendId, target.destination, distinct) : target.destination;
      if (href !== target.url) edits.push({ start: target.start, end: target.end, text: attributeValue(href) });
    }
  }
  if (input.trackOpens) {
    const at = linksOf(html).bodyClose;
    edits.push({ start: at, end: at, text: `<img src="${openUrl(base, input.linkKey, input.sendId)}" width="1" height="1" alt="">` });
  }
  if (edits.length === 0) return html;
  // The pixel's insertion point is after every link of the body; links of a conditional comment after </body> sort in.
  edits.sort((a, b) => a.start - b.start || a.end - b.end);
  let out = '';
  let at = 0;
  for (const edit of edits) {
    out += html.slice(at, edit.start) + edit.text;
    at = edit.end;
  }
  return out + html.slice(at);
}
