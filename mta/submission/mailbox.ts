// A strict reading of a header field that must hold exactly one mailbox (From, Sender): RFC 5322 §3.4 name-addr or addr-spec, nothing else.
//
// Parsers differ on malformed address fields (`<a@ours.example>b@evil.example`, an unquoted address
// in the display name, comments, groups): one reads our tenant's address, a recipient's client or a
// DMARC verifier another. So anything outside the plain forms is refused rather than read leniently:
//   addr-spec                          news@shop.example
//   [display-name] "<" addr-spec ">"   "News" <news@shop.example>, =?utf-8?q?caf=C3=A9?= <a@shop.example>
// where a display name is words (atoms, dots allowed as in "John Q. Public", or quoted strings).
// Comments, groups, domain literals, several mailboxes and anything trailing are refused.

export type MailboxReading = { address: string; error?: undefined } | { address?: undefined; error: string };

/** RFC 5322 atext, with RFC 6532's UTF-8 beyond ASCII. */
const ATEXT = /[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~\u0080-\uffff]/;
/** Printable characters of an addr-spec: specials, white space and controls end it (the address itself is checked by normalizeEmail). */
const ADDR_CHAR = /[^\s"(),:;<>@[\]\\\u0000-\u001f\u007f]/;
const WSP = /[ \t]/;

/** The one address of a field value (the bytes after the colon, folding included), or why it is refused. */
export function readMailbox(raw: Buffer): MailboxReading {
  let value: string;
  try {
    value = new TextDecoder('utf-8', { fatal: true }).decode(raw);
  } catch {
    return { error: 'is not valid UTF-8' };
  }
  // Unfolding (RFC 5322 §2.2.3): a line break followed by white space is white space.
  value = value.replace(/\r?\n$/, '').replace(/\r?\n(?=[ \t])/g, '');
  // C1 controls too: U+0085 ends a line for some parsers.
  if (/[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u2028\u2029]/.test(value)) return { error: 'contains a control character or a bare line break' };
  const p = new Reader(value);
  p.skipSpace();
  if (p.peek() === undefined) return { error: 'is empty' };
  if (!value.includes('<')) {
    const address = p.addrSpec();
    if (address === undefined) return { error: p.problem() };
    return p.end(address);
  }
  // name-addr: an optional display name, then the address in angle brackets, then nothing.
  if (!p.phrase()) return { error: 'has a quoted string without its closing quote' };
  p.skipSpace();
  if (!p.take('<')) return { error: p.problem() };
  p.skipSpace();
  const address = p.addrSpec();
  if (address === undefined) return { error: p.problem() };
  p.skipSpace();
  if (!p.take('>')) return { error: p.problem() };
  return p.end(address);
}

class Reader {
  private at = 0;
  constructor(private readonly text: string) {}

  peek(): string | undefined {
    return this.text[this.at];
  }

  take(char: string): boolean {
    if (this.text[this.at] !== char) return false;
    this.at++;
    return true;
  }

  skipSpace(): void {
    while (this.at < this.text.length && WSP.test(this.text[this.at]!)) this.at++;
  }

  /** local@domain, both parts runs of address characters; undefined when not at one. */
  addrSpec(): string | undefined {
    const start = this.at;
    if (this.run(ADDR_CHAR) === 0 || !this.take('@') || this.run(ADDR_CHAR) === 0) {
      this.at = Math.max(this.at, start);
      return undefined;
    }
    return this.text.slice(start, this.at);
  }

  /** Zero or more words (atoms with dots, quoted strings) before "<"; false on an unterminated quoted string. */
  phrase(): boolean {
    for (let words = 0; words < this.text.length; words++) {
      this.skipSpace();
      const c = this.peek();
      if (c === '"') {
        if (!this.quoted()) return false;
      } else if (c !== undefined && (c === '.' || ATEXT.test(c))) {
        this.run(/[.]/, ATEXT);
      } else {
        return true;
      }
    }
    return true;
  }

  /** The reading when only white space is left after the mailbox; anything else trailing is refused. */
  end(address: string): MailboxReading {
    this.skipSpace();
    if (this.peek() === undefined) return { address };
    return { error: this.problem(`has ${this.what()} after the address`) };
  }

  /** Why reading stopped where it did, for the reply. */
  problem(found = `has ${this.what()}`): string {
    if (this.peek() === undefined) return 'ends before a complete address: expected one mailbox, as local@domain or "Name" <local@domain>';
    return `${found}: only one mailbox is accepted, as local@domain or "Name" <local@domain>, without comments or groups`;
  }

  private what(): string {
    const c = this.peek()!;
    if (c === '(') return 'a comment';
    if (c === ':' || c === ';') return 'group syntax';
    if (c === ',' || c === '<') return 'a second mailbox';
    if (c === '@' || c === '>') return 'an address outside the angle brackets';
    return `text ("${c}")`;
  }

  private run(...classes: RegExp[]): number {
    const start = this.at;
    while (this.at < this.text.length && classes.some((r) => r.test(this.text[this.at]!))) this.at++;
    return this.at - start;
  }

  /** A quoted string: qtext and quoted pairs up to the closing quote. */
  private quoted(): boolean {
    const start = this.at;
    this.at++;
    while (this.at < this.text.length) {
      const c = this.text[this.at]!;
      if (c === '"') {
        this.at++;
        return true;
      }
      this.at += c === '\\' ? 2 : 1;
    }
    this.at = start;
    return false;
  }
}
