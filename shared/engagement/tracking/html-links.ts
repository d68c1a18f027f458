// Finds the links of an HTML body (href of <a>, <area> and Outlook's VML shapes inside conditional comments) and where </body> is, as offsets into the text,
// with htmlparser2's tokenizer: the document itself is never re-serialized.
import { Tokenizer, type TokenizerCallbacks } from 'htmlparser2';

/** One href: the span of its value in the source (quotes included) and the value, entities decoded and trimmed. */
export interface LinkSlot {
  start: number;
  end: number;
  url: string;
}

export interface HtmlLinks {
  /** In document order. */
  links: LinkSlot[];
  /** Where the last </body> starts; the text's length when there is none. */
  bodyClose: number;
  /** The span of every tag, '<' to '>' inclusive, in document order (tags inside conditional comments too). */
  tags: [number, number][];
  /** The span of every comment, '<!--' to '-->'. */
  comments: [number, number][];
}

// htmlparser2's QuoteType (a const enum in its types): no value, unquoted, single, double.
const NO_VALUE = 0;
const UNQUOTED = 1;

/** Elements whose href is a link a reader follows: anchors, image-map areas, and VML shapes (Outlook's "bulletproof" buttons). */
function isLinkElement(name: string): boolean {
  return name === 'a' || name === 'area' || name.startsWith('v:');
}

const SPACE = /[\t\n\f\r ]/;

class LinkCollector implements TokenizerCallbacks {
  readonly links: LinkSlot[] = [];
  readonly tags: [number, number][] = [];
  readonly comments: [number, number][] = [];
  bodyClose = -1;
  private tag = '';
  private tagStart = 0;
  private sawHref = false;
  private attribute = '';
  private attributeNameEnd = 0;
  private value: string[] = [];

  constructor(
    private readonly text: string,
    private readonly offset: number,
  ) {}

  onopentagname(start: number, end: number): void {
    this.tag = this.text.slice(start, end).toLowerCase();
    this.tagStart = start - 1;
    this.sawHref = false;
  }
  onattribname(start: number, end: number): void {
    this.attribute = this.text.slice(start, end).toLowerCase();
    this.attributeNameEnd = end;
    this.value = [];
  }
  onattribdata(start: number, end: number): void {
    this.value.push(this.text.slice(start, end));
  }
  onattribentity(codepoint: number): void {
    this.value.push(String.fromCodePoint(codepoint));
  }
  onattribend(quote: number, end: number): void {
    if (this.attribute !== 'href' || !isLinkElement(this.tag) || quote === NO_VALUE) return;
    // A repeated href is ignored by browsers: only the first one is the link.
    if (this.sawHref) return;
    this.sawHref = true;
    let start = this.attributeNameEnd;
    while (start < end && (SPACE.test(this.text[start]!) || this.text[start] === '=')) start++;
    const quoted = quote !== UNQUOTED;
    this.links.push({ start: this.offset + start, end: this.offset + end + (quoted ? 1 : 0), url: this.value.join('').trim() });
  }
  onopentagend(end: number): void {
    this.tags.push([this.offset + this.tagStart, this.offset + end]);
    this.tag = '';
  }
  onselfclosingtag(end: number): void {
    this.tags.push([this.offset + this.tagStart, this.offset + end]);
    this.tag = '';
  }
  onclosetag(start: number, end: number): void {
    const open = this.text.lastIndexOf('<', start);
    const close = this.text.indexOf('>', end);
    this.tags.push([this.offset + open, this.offset + (close < 0 ? this.text.length : close)]);
    if (this.text.slice(start, end).toLowerCase() === 'body') this.bodyClose = this.offset + open;
  }
  oncomment(start: number, end: number, endOffset: number): void {
    this.comments.push([this.offset + this.text.lastIndexOf('<', start), this.offset + end]);
    // Conditional comments (<!--[if mso]> ... <![endif]-->) hold markup Outlook renders, links included.
    const content = this.text.slice(start, end - endOffset);
    if (!content.startsWith('[if')) return;
    const inner = new LinkCollector(content, this.offset + start);
    tokenize(content, inner);
    this.links.push(...inner.links);
    this.tags.push(...inner.tags);
  }
  oncdata(): void {}
  ondeclaration(): void {}
  onend(): void {}
  onprocessinginstruction(): void {}
  ontext(): void {}
  ontextentity(): void {}
}

function tokenize(text: string, collector: LinkCollector): void {
  const tokenizer = new Tokenizer({ decodeEntities: true }, collector);
  tokenizer.write(text);
  tokenizer.end();
}

/** A replacement of source[start, end) by text. */
export interface HtmlEdit {
  start: number;
  end: number;
  text: string;
}

/** The source with the edits applied, in position order (an insertion, start = end, goes before a replacement there). */
export function applyEdits(source: string, edits: HtmlEdit[]): string {
  edits.sort((a, b) => a.start - b.start || a.end - b.end);
  let out = '';
  let at = 0;
  for (const edit of edits) {
    out += source.slice(at, edit.start) + edit.text;
    at = edit.end;
  }
  return out + source.slice(at);
}

export function findLinks(html: string): HtmlLinks {
  const collector = new LinkCollector(html, 0);
  tokenize(html, collector);
  collector.links.sort((a, b) => a.start - b.start);
  collector.tags.sort((a, b) => a[0] - b[0]);
  return { links: collector.links, bodyClose: collector.bodyClose < 0 ? html.length : collector.bodyClose, tags: collector.tags, comments: collector.comments };
}
