// Tracking decided once on a campaign's body_html template instead of on every rendered message: when Liquid cannot change which links a message has, each
// tracked href becomes a Liquid output of the recipient's click URL (and the open pixel one more), so rendering writes the decorated message at once.
import { applyEdits, findLinks, type HtmlEdit } from './html-links.js';
import { attributeValue, trackedTargets } from './decorate.js';
import { clickUrls, linkBase, openUrl, type LinkOwner } from './link-tokens.js';
import { utmParameters, type UtmValues } from './utm.js';

export interface TemplateTracking {
  /** MAILPATH_PUBLIC_URL. */
  publicUrl: URL;
  trackOpens: boolean;
  trackClicks: boolean;
  utm?: UtmValues | undefined;
}

/** A body_html template with its tracking in place: parse `source` instead, and render it with `variables(sendId)`. */
export interface TrackedTemplate {
  source: string;
  /** The reserved Liquid variables of one send: its click URLs and its open pixel. */
  variables(key: Buffer, sendId: string, owner: LinkOwner): Record<string, string>;
}

const clickVariable = (k: number) => `__mp_click_${k}`;
const OPEN_VARIABLE = '__mp_open';

/** Liquid outputs and tags, as liquidjs delimits them (whitespace control included). */
const LIQUID = /\{\{[\s\S]*?\}\}|\{%[\s\S]*?%\}/g;
const DELIMITER = /\{\{|\{%|\}\}|%\}/;
const TAG_NAME = /^\{%-?\s*([A-Za-z_]+)/;
const OPENS = new Set(['if', 'unless', 'case', 'for', 'tablerow', 'capture', 'comment']);
/** The tags followed here: the blocks above, their branches and ends, and tags that write nothing. Any other (raw, liquid, cycle, echo, …) is not. */
const KNOWN = new Set([...OPENS, ...[...OPENS].map((t) => `end${t}`), 'elsif', 'else', 'when', 'assign', 'break', 'continue']);
const UNSUBSCRIBE_ONLY = /^\{\{-?\s*unsubscribe_url\s*-?\}\}$/;
const RAW_FILTER = /\|\s*raw\b/;
/** A Liquid region inside a tag that sits in a quoted attribute value (escaped output cannot leave it): the quote it is in. */
const IN_QUOTED_VALUE = /=\s*(["'])(?:(?!\1)[^])*$/;
/** Text that a Liquid region right after it could turn into a tag or a comment ('<' + 'a', '<!-' + '-'). */
const OPENS_MARKUP = /<[!/?]?-?$/;

interface Region {
  start: number;
  end: number;
  text: string;
}

/** The Liquid regions of a source, or undefined when they cannot be told apart from the text with certainty. */
function liquidRegions(source: string): Region[] | undefined {
  const regions: Region[] = [];
  let at = 0;
  for (const m of source.matchAll(LIQUID)) {
    if (DELIMITER.test(source.slice(at, m.index))) return undefined;
    regions.push({ start: m.index, end: m.index + m[0].length, text: m[0] });
    at = m.index + m[0].length;
  }
  return DELIMITER.test(source.slice(at)) ? undefined : regions;
}

/** The block depth of Liquid tags at each tag boundary, as [position, depth after it]; undefined for what is not followed. */
function blockDepths(regions: Region[]): [number, number][] | undefined {
  const steps: [number, number][] = [];
  let depth = 0;
  for (const r of regions) {
    if (!r.text.startsWith('{%')) continue;
    const name = TAG_NAME.exec(r.text)?.[1]?.toLowerCase();
    if (name === undefined || !KNOWN.has(name)) return undefined;
    if (OPENS.has(name)) depth++;
    else if (name.startsWith('end') && OPENS.has(name.slice(3))) depth--;
    steps.push([r.end, depth]);
  }
  return depth === 0 ? steps : undefined;
}

const depthAt = (steps: [number, number][], at: number) => steps.filter(([end]) => end <= at).at(-1)?.[1] ?? 0;

/**
 * The template with its tracking in place, or undefined when Liquid could change the message's links (the caller
 * then decorates each rendered message, tracking/decorate.ts): every tracked link and </body> must be outside any
 * Liquid block, no Liquid tag may sit inside an HTML tag, Liquid output inside a tag only in a quoted attribute value
 * (escaped, it cannot leave it), no href may hold Liquid but `{{ unsubscribe_url }}` (our own link, left alone), no
 * output may skip escaping (`| raw`), and the public URL must need no escaping in an attribute. Under those rules the
 * rendered message is exactly what decorating the rendered template would give.
 */
export function trackTemplate(source: string, o: TemplateTracking): TrackedTemplate | undefined {
  const params = utmParameters(o.utm);
  if (params.length === 0 && !o.trackClicks && !o.trackOpens) return undefined;
  const base = linkBase(o.publicUrl);
  if (/[&"'<>]/.test(base)) return undefined;
  const regions = liquidRegions(source);
  const steps = regions && blockDepths(regions);
  if (!regions || !steps) return undefined;
  if (regions.some((r) => !r.text.startsWith('{%') && RAW_FILTER.test(r.text))) return undefined;
  const found = findLinks(source);
  for (const [tagStart, tagEnd] of found.tags) {
    for (const r of regions) {
      if (r.end <= tagStart || r.start > tagEnd) continue;
      const quote = IN_QUOTED_VALUE.exec(source.slice(tagStart, r.start))?.[1];
      if (r.text.startsWith('{%') || r.end > tagEnd || quote === undefined || r.text.includes(quote)) return undefined;
    }
  }
  // Outside tags, no region may come right after the start of markup (it could complete a tag name or '<!--'), nor
  // sit in a comment (it could make one conditional).
  let tail = '';
  let cursor = 0;
  for (const r of regions) {
    // The last few characters of literal text before the region, trailing white space dropped (`{{-` strips it).
    tail = (tail + source.slice(cursor, r.start)).trimEnd().slice(-4);
    cursor = r.end;
    if (OPENS_MARKUP.test(tail)) return undefined;
  }
  if (regions.some((r) => found.comments.some(([s, e]) => r.start < e && r.end > s))) return undefined;
  const liquidIn = (start: number, end: number) => regions.some((r) => r.start < end && r.end > start);
  for (const link of found.links) {
    if (
      liquidIn(link.start, link.end) &&
      !UNSUBSCRIBE_ONLY.test(
        source
          .slice(link.start, link.end)
          .replace(/^["']|["']$/g, '')
          .trim(),
      )
    )
      return undefined;
  }
  const targets = trackedTargets(
    found.links.filter((l) => !liquidIn(l.start, l.end)),
    base,
    params,
  );
  if (targets.some((t) => depthAt(steps, t.start) !== 0 || /<body/i.test(t.url))) return undefined;
  if (o.trackOpens && depthAt(steps, found.bodyClose) !== 0) return undefined;

  const edits: HtmlEdit[] = [];
  targets.forEach((t, k) => {
    if (o.trackClicks) edits.push({ start: t.start, end: t.end, text: `"{{ ${clickVariable(k)} }}"` });
    else if (t.destination !== t.url) edits.push({ start: t.start, end: t.end, text: attributeValue(t.destination) });
  });
  if (o.trackOpens) edits.push({ start: found.bodyClose, end: found.bodyClose, text: `{{ ${OPEN_VARIABLE} | raw }}` });
  const out = applyEdits(source, edits);

  const destinations = targets.map((t) => t.destination);
  const distinct = new Set(destinations).size;
  return {
    source: out,
    variables(key, sendId, owner) {
      const variables: Record<string, string> = {};
      if (o.trackClicks) {
        const clickUrl = clickUrls(base, key, sendId, owner);
        destinations.forEach((d, k) => (variables[clickVariable(k)] = clickUrl(d, distinct)));
      }
      if (o.trackOpens) variables[OPEN_VARIABLE] = `<img src="${openUrl(base, key, sendId)}" width="1" height="1" alt="">`;
      return variables;
    },
  };
}
