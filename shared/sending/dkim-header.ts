// The header side of a DKIM signature as mailauth makes it (its field selection, h= list, relaxed canonicalization and DKIM-Signature layout), on one latin1
// string per message instead of a Buffer per field: mailauth's own steps cost more than the rest of signing but the RSA operation.
import { domainToASCII } from 'node:url';
import { foldLines } from 'nodemailer/lib/mime-funcs';

/** The signature's tags besides h=, b= and the fixed ones. */
export interface SignatureTags {
  domain: string;
  selector: string;
  /** Seconds since the epoch (t=). */
  time: number;
  /** The body hash, base64 (bh=). */
  bodyHash: string;
}

/** What is signed and what the signature header needs: the canonical header block (ending in the unsigned DKIM-Signature) and the field. */
export interface HeaderSigning {
  canonical: Buffer;
  /** The folded DKIM-Signature field for a signature (base64), without its line ending. */
  field(signature: string): string;
}

/**
 * Relaxed canonicalization of one field (RFC 6376 §3.4.2) exactly as mailauth's formatRelaxedLine writes it:
 * unfolded, the name lower-cased and trimmed, the space after the colon dropped, runs of white space as one space
 * (JavaScript's \s, as mailauth matches it), trimmed.
 */
function relaxed(line: string): string {
  return line
    .replace(/\r?\n/g, '')
    .replace(/^([^:]*):\s*/, (_m, k: string) => `${k.toLowerCase().trim()}:`)
    .replace(/\s+/g, ' ')
    .trim();
}

/** The fields of a header block as mailauth's parseHeaders splits them: a line starting with white space continues the field above. */
function fields(head: string): { key: string; casedKey: string; line: string }[] {
  const rows = head.replace(/[\r\n]+$/, '').split(/\r?\n/);
  const out: { key: string; casedKey: string; line: string }[] = [];
  for (const row of rows) {
    const last = out[out.length - 1];
    if (last && /^\s/.test(row)) {
      last.line += `\r\n${row}`;
      continue;
    }
    const casedKey = /^[^:]+/.exec(row)?.[0].trim() ?? '';
    out.push({ key: casedKey.toLowerCase(), casedKey, line: row });
  }
  return out;
}

// Sending domains are stored as A-labels; this is a safety net for anything else (mailauth converts d= and s= too).
const aLabels = new Map<string, string>();
function aLabel(name: string): string {
  let ascii = aLabels.get(name);
  if (ascii === undefined) {
    ascii = /^[\x00-\x7f]*$/.test(name) ? name : domainToASCII(name) || name;
    if (aLabels.size < 10_000) aLabels.set(name, ascii);
  }
  return ascii;
}

/** The DKIM-Signature field in mailauth's tag order and folding (b= broken every 75 characters, the whole folded at 76). */
function signatureField(h: string, tags: SignatureTags, b: string): string {
  const bTag = `b=${b}`.replace(/.{75}/g, '$& ').trim();
  return foldLines(
    `DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=${aLabel(tags.domain)}; h=${h}; q=dns/txt; s=${aLabel(tags.selector)}; t=${tags.time}; ` +
      `bh=${tags.bodyHash}; ${bTag}`,
  );
}

/**
 * The header block to sign: every occurrence of the `signed` fields (lower-case names), bottom-up, each in relaxed
 * form with CRLF, then the DKIM-Signature field with an empty b=, as mailauth's getSigningHeaderLines and
 * relaxedHeaders write them; h= names the fields as cased in the message, joined by ': '.
 */
export function headerSigning(head: string, signed: ReadonlySet<string>, tags: SignatureTags): HeaderSigning {
  const chosen = fields(head)
    .filter((f) => signed.has(f.key))
    .reverse();
  const h = chosen.map((f) => f.casedKey).join(': ');
  // A b= value as long as mailauth's placeholder, so the folding before it is what the signed field will have.
  const unsigned = relaxed(signatureField(h, tags, 'a'.repeat(73))).replace(/([;:\s]+b=)[^;]+/, '$1');
  let canonical = '';
  for (const f of chosen) canonical += `${relaxed(f.line)}\r\n`;
  return { canonical: Buffer.from(canonical + unsigned, 'latin1'), field: (signature) => signatureField(h, tags, signature) };
}
