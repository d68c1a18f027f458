// Types for the parts of mailauth's DKIM signer the outbound signer composes (mailauth ships no typings for them).
declare module 'mailauth/lib/tools.js' {
  export interface ParsedHeader {
    key: string | null;
    casedKey: string | undefined;
    line: Buffer;
  }
  export interface SigningHeaderLines {
    keys: string;
    headers: ParsedHeader[];
  }
  export function parseHeaders(buf: Buffer): { parsed: ParsedHeader[]; original: Buffer };
  export function getSigningHeaderLines(parsed: ParsedHeader[], fieldNames: string): SigningHeaderLines;
  export function formatSignatureHeaderLine(type: 'DKIM', values: Record<string, unknown>, folded: boolean): string;
}

declare module 'mailauth/lib/dkim/body/index.js' {
  export function dkimBody(
    canonicalization: string,
    hashAlgo: string,
    maxBodyLength: number | false,
  ): {
    update(chunk: Buffer): void;
    digest(encoding: 'base64'): string;
  };
}

declare module 'mailauth/lib/dkim/header/index.js' {
  import type { SigningHeaderLines } from 'mailauth/lib/tools.js';
  export function generateCanonicalizedHeader(
    type: 'DKIM',
    lines: SigningHeaderLines,
    options: Record<string, unknown>,
  ): { canonicalizedHeader: Buffer; dkimHeaderOpts: Record<string, unknown> };
}
