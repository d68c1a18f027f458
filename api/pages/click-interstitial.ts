// The page a click link answers instead of a redirect when no real mail carried it (a simulated or sandbox send) or its tenant is suspended: the target named,
// as a link the person may choose to follow.
import type { PageAnswer } from './answer.js';
import { html, notice, renderPage } from './html.js';

export type InterstitialReason = 'simulated' | 'suspended';

const WHY: Record<InterstitialReason, string> = {
  simulated: 'This link comes from a test message that was never delivered, so it is not forwarded automatically.',
  suspended: 'The account that sent this message is suspended, so its links are not forwarded automatically.',
};

/**
 * No script and nothing loaded (the pages' CSP): the target is escaped text and a plain link, rel=noreferrer so the
 * site learns nothing of the token, nofollow for crawlers. 200: the link worked, it just does not redirect.
 */
export function clickInterstitial(target: string, reason: InterstitialReason): PageAnswer {
  return {
    status: 200,
    html: renderPage(
      'Leaving Mailpath',
      html`${notice('problem', 'Check this link before you follow it', WHY[reason])}
<p>The link leads to:</p>
<p><a href="${target}" rel="noreferrer noopener nofollow">${target}</a></p>
<p class="hint">Follow it only if you trust where it goes.</p>`,
    ),
  };
}
