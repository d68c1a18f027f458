// Server-rendered HTML for the account pages: an escaping template tag, the page layout with its one hashed inline style, and the strict headers every page
// answers with.
import { createHash } from 'node:crypto';

/** Markup built by `html` (its interpolations already escaped): inserted into another template as is. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for element content and quoted attribute values alike. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

function fragment(value: unknown): string {
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(fragment).join('');
  if (value === undefined || value === null || value === false) return '';
  return escapeHtml(String(value));
}

/**
 * Template tag: every interpolated value is escaped unless it is SafeHtml (another `html` result), so nothing a
 * request carries can reach the page as markup. Arrays are joined; undefined, null and false render nothing.
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0]!;
  values.forEach((value, i) => {
    out += fragment(value) + strings[i + 1]!;
  });
  return new SafeHtml(out);
}

// The pages read fine without it (plain HTML form); it only sets a readable width, spacing and focus rings.
const STYLE =
  'body{font:1rem/1.5 system-ui,sans-serif;margin:0;padding:2rem 1rem;color:#1a1a1a;background:#fff}' +
  'main{max-width:30rem;margin:0 auto}' +
  'label{display:block;font-weight:600;margin-top:1rem}' +
  'input{display:block;box-sizing:border-box;width:100%;margin-top:.25rem;padding:.5rem;font:inherit;border:1px solid #555;border-radius:4px}' +
  'input[aria-invalid=true]{border-color:#b91c1c}' +
  'button{margin-top:1.5rem;padding:.6rem 1.2rem;font:inherit;border:0;border-radius:4px;background:#1d4ed8;color:#fff;cursor:pointer}' +
  ':focus-visible{outline:3px solid #1d4ed8;outline-offset:2px}' +
  '.hint{color:#444;font-size:.9rem;margin:.25rem 0 0}' +
  '.problem,.done{padding:.75rem 1rem;border-left:4px solid #b91c1c;background:#fef2f2}' +
  '.done{border-color:#15803d;background:#f0fdf4}' +
  '.problem h2,.done h2{font-size:1.1rem;margin:0 0 .25rem}';

const STYLE_HASH = `'sha256-${createHash('sha256').update(STYLE, 'utf8').digest('base64')}'`;

/**
 * Nothing may load (no scripts, images, fonts or frames: default-src 'none'); the one inline style is allowed by its
 * hash; forms post only to this origin; no other site may frame the page (clickjacking) and no <base> can redirect links.
 */
export const CONTENT_SECURITY_POLICY = `default-src 'none'; style-src ${STYLE_HASH}; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;

/**
 * Headers of every page answer. The page URL carries a token: no-referrer keeps it from other sites, no-store from
 * caches and the back-forward cache; DENY is frame-ancestors for browsers that do not read the CSP.
 */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
};

/** A whole document: English, one h1 naming the page, the content in <main>. */
export function renderPage(title: string, content: SafeHtml): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title} – Mailpath</title>
<style>${new SafeHtml(STYLE)}</style>
</head>
<body>
<main>
<h1>${title}</h1>
${content}
</main>
</body>
</html>
`.value;
}

/** A message box: role=alert for a problem so screen readers announce it; role=status for a success. */
export function notice(kind: 'problem' | 'done', heading: string, text: SafeHtml | string, id?: string): SafeHtml {
  return html`<div class="${kind}" role="${kind === 'problem' ? 'alert' : 'status'}"${id ? html` id="${id}"` : ''}>
<h2>${heading}</h2>
<p>${text}</p>
</div>`;
}
