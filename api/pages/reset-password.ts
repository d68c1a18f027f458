// The page the password-reset e-mail links to: a form carrying the token, posted back here and confirmed server-side with the JSON endpoint's domain call.
import { confirmPasswordReset, type PasswordResetDeps } from '../../shared/accounts/auth/password-reset.js';
import { AppError } from '../../shared/kernel/errors.js';
import { brokenLinkText, field, formProblem, linkToken, passwordFields, passwordSentence, typedPasswordProblem } from './form.js';
import { html, notice, renderPage } from './html.js';
import { tooManyAttempts, type PageAnswer } from './answer.js';

export const RESET_PATH = '/reset-password';

const TITLE = 'Choose a new password';

function form(deps: PasswordResetDeps, token: string, problem?: string): string {
  return renderPage(
    TITLE,
    html`${formProblem(problem)}
<p>Choose the new password of your Mailpath account. Every session signed in before, on any device, ends when it is set.</p>
<form method="post" action="${RESET_PATH.slice(1)}">
${passwordFields({ token, name: 'new_password', label: 'New password', minLength: deps.config.auth.min_password_length, problem })}
<button type="submit">Set the new password</button>
</form>`,
  );
}

const brokenLink = (): PageAnswer => ({ status: 400, html: renderPage(TITLE, notice('problem', 'This link does not work', brokenLinkText)) });

/** GET: the form, with the link's token in a hidden field (and nowhere else). */
export function showResetForm(deps: PasswordResetDeps, query: unknown): PageAnswer {
  const token = linkToken(query);
  return token ? { status: 200, html: form(deps, token) } : brokenLink();
}

/** POST: sets the password with the token; a weak or mistyped password shows the form again (the token is still good). */
export async function submitReset(deps: PasswordResetDeps, body: unknown, ip: string): Promise<PageAnswer> {
  const token = linkToken(body);
  if (!token) return brokenLink();
  const password = field(body, 'new_password');
  const typed = typedPasswordProblem(password, field(body, 'new_password_again'));
  if (typed) return { status: 422, html: form(deps, token, typed) };
  try {
    await confirmPasswordReset(deps, { token, new_password: password! }, ip);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    if (err.status === 422) return { status: 422, html: form(deps, token, passwordSentence(err.message)) };
    if (err.status === 429) return { status: 429, headers: err.headers, html: form(deps, token, tooManyAttempts(err)) };
    if (err.status === 400) {
      const text = 'It has already been used, a newer link replaced it, or it has expired (links work for one hour). Ask for a new password-reset e-mail.';
      return { status: 400, html: renderPage('This link does not work any more', notice('problem', 'The password was not changed', text)) };
    }
    throw err;
  }
  return {
    status: 200,
    html: renderPage(
      'Password changed',
      notice('done', 'Your new password is set', 'Every session signed in before has ended. Sign in again with your e-mail address and the new password.'),
    ),
  };
}
