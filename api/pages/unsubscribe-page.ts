// The unsubscribe page a message's link opens (GET: what it does and one button) and its answers (done, done before, a link that names nothing), in the
// account pages' layout.
import { html, notice, renderPage } from './html.js';
import type { PageAnswer } from './answer.js';

const TITLE = 'Unsubscribe';

/**
 * The address as the pages show it: the local part's first character and the domain (j•••@example.com). Anyone who
 * holds the link (a forwarded message, a scanner's log) sees the page; the reader still recognises their address.
 * Always three dots, so the length of the local part is not told either.
 */
export function maskedAddress(address: string): string {
  const at = address.lastIndexOf('@');
  if (at <= 0) return '•••';
  return `${Array.from(address.slice(0, at))[0]}•••${address.slice(at)}`;
}

/**
 * The confirmation page: one button posting back to the same address (RFC 8058's one-click body, so the page
 * and a mail client's one-click request are handled alike). Nothing happens on GET: link scanners fetch it.
 */
export function unsubscribeForm(token: string, recipient: string): PageAnswer {
  return {
    status: 200,
    html: renderPage(
      TITLE,
      html`<p>Stop receiving these e-mails at <strong>${maskedAddress(recipient)}</strong>?</p>
<form method="post" action="${token}">
<input type="hidden" name="List-Unsubscribe" value="One-Click">
<input type="hidden" name="via" value="page">
<button type="submit">Unsubscribe</button>
</form>`,
    ),
  };
}

export function unsubscribedPage(recipient: string, before: boolean): PageAnswer {
  const text = before
    ? html`<strong>${maskedAddress(recipient)}</strong> was already unsubscribed. You will not receive these e-mails any more.`
    : html`<strong>${maskedAddress(recipient)}</strong> is unsubscribed. You will not receive these e-mails any more.`;
  return { status: 200, html: renderPage('You are unsubscribed', notice('done', before ? 'Already unsubscribed' : 'Unsubscribed', text)) };
}

/** A token that does not verify, or names a send that no longer exists. */
export function brokenUnsubscribeLink(): PageAnswer {
  const text =
    'This unsubscribe link is incomplete or no longer valid. Open it again from the e-mail; if your e-mail program split it over two lines, copy ' +
    'the whole address into the browser.';
  return { status: 404, html: renderPage('This link does not work', notice('problem', 'Nothing was changed', text)) };
}

/** A click link whose token does not verify: never a redirect. */
export function brokenClickLink(): PageAnswer {
  const text =
    'This link is incomplete or damaged. Open it again from the e-mail; if your e-mail program split it over two lines, copy the whole address into ' +
    'the browser.';
  return { status: 404, html: renderPage('This link does not work', notice('problem', 'Link not found', text)) };
}
