// The page the team-invite e-mail links to: a form carrying the token, posted back here and accepted server-side with the JSON endpoint's domain call.
import { AppError } from '../../shared/kernel/errors.js';
import { acceptInvite, type AcceptDeps } from '../../shared/accounts/team/accept.js';
import type { PageAnswer } from './answer.js';
import { brokenLinkText, field, formProblem, linkToken, MAX_FIRST_NAME_LENGTH, passwordFields, passwordSentence, typedPasswordProblem } from './form.js';
import { html, notice, renderPage } from './html.js';

export const INVITE_PATH = '/accept-invite';

const TITLE = 'Join your team on Mailpath';

function form(deps: AcceptDeps, token: string, firstName = '', problem?: string): string {
  return renderPage(
    TITLE,
    html`${formProblem(problem)}
<p>You have been invited to a Mailpath workspace. Choose a password to create your account; you sign in with the e-mail address the invite was sent to.</p>
<form method="post" action="${INVITE_PATH.slice(1)}">
<label for="first_name">First name (optional)</label>
<input id="first_name" name="first_name" type="text" autocomplete="given-name" maxlength="${MAX_FIRST_NAME_LENGTH}" value="${firstName}">
${passwordFields({ token, name: 'password', label: 'Password', minLength: deps.config.auth.min_password_length, problem })}
<button type="submit">Create my account</button>
</form>`,
  );
}

const brokenLink = (): PageAnswer => ({ status: 400, html: renderPage(TITLE, notice('problem', 'This link does not work', brokenLinkText)) });

const refused = (status: number, title: string, text: string): PageAnswer => ({
  status,
  html: renderPage(title, notice('problem', 'No account was created', text)),
});

/** GET: the form, with the link's token in a hidden field (and nowhere else). */
export function showInviteForm(deps: AcceptDeps, query: unknown): PageAnswer {
  const token = linkToken(query);
  return token ? { status: 200, html: form(deps, token) } : brokenLink();
}

/** POST: creates the invited user; a weak or mistyped password shows the form again (the invite is not used up). */
export async function submitInvite(deps: AcceptDeps, body: unknown, ip: string): Promise<PageAnswer> {
  const token = linkToken(body);
  if (!token) return brokenLink();
  const firstName = (field(body, 'first_name') ?? '').trim();
  if (firstName.length > MAX_FIRST_NAME_LENGTH || firstName.includes('\u0000')) {
    return { status: 422, html: form(deps, token, '', `The first name must be at most ${MAX_FIRST_NAME_LENGTH} characters of text.`) };
  }
  const password = field(body, 'password');
  const typed = typedPasswordProblem(password, field(body, 'password_again'));
  if (typed) return { status: 422, html: form(deps, token, firstName, typed) };
  try {
    // The session the JSON endpoint answers with is not shown: this page has nowhere to keep it.
    await acceptInvite(deps, { token, password: password!, first_name: firstName || undefined }, ip);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    switch (err.status) {
      case 422:
        return { status: 422, html: form(deps, token, firstName, passwordSentence(err.message)) };
      case 404:
        return refused(404, 'This invite link is not valid', `${brokenLinkText} If it still does not work, ask the person who invited you for a new invite.`);
      case 410:
        return refused(
          410,
          'This invite can no longer be used',
          'It has already been accepted, was withdrawn, or has expired. Ask the person who invited you for a new invite.',
        );
      case 409:
        return refused(
          409,
          'This address already has an account',
          'The e-mail address this invite was sent to already belongs to a Mailpath account, so the invite cannot create another. Ask the person ' +
            'who invited you to invite a different address.',
        );
      case 403:
        return refused(
          403,
          'This workspace is suspended',
          'Signing in to it is blocked for now, so the invite cannot be accepted. The invite stays valid until it expires; contact support.',
        );
      default:
        throw err;
    }
  }
  return {
    status: 200,
    html: renderPage(
      'Your account is ready',
      notice('done', 'Welcome to the team', 'Sign in with the e-mail address this invite was sent to and the password you just chose.'),
    ),
  };
}
