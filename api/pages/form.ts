// What the account pages share: reading the link's token and the posted fields, and the new-password inputs with their rules and problem.
import { html, notice, type SafeHtml } from './html.js';

/** The JSON endpoints' limits (api/routes/password-reset.ts, team-auth.ts), so a page accepts no more than they do. */
export const MAX_TOKEN_LENGTH = 200;
export const MAX_PASSWORD_LENGTH = 200;
export const MAX_FIRST_NAME_LENGTH = 100;

/** One string field of a posted form or a query string; a repeated or missing field is undefined. */
export function field(source: unknown, name: string): string | undefined {
  if (source instanceof URLSearchParams) {
    const values = source.getAll(name);
    return values.length === 1 ? values[0] : undefined;
  }
  if (source && typeof source === 'object') {
    const value = (source as Record<string, unknown>)[name];
    return typeof value === 'string' ? value : undefined;
  }
  return undefined;
}

/** The token of a link, or undefined when it is missing or cannot be one (empty, too long, a NUL character). */
export function linkToken(source: unknown): string | undefined {
  const token = field(source, 'token');
  if (token === undefined || token.length === 0 || token.length > MAX_TOKEN_LENGTH || token.includes('\u0000')) return undefined;
  return token;
}

/** Why the two typed passwords cannot be sent on, or undefined; the strength rules are the domain's (passwords.ts). */
export function typedPasswordProblem(password: string | undefined, again: string | undefined): string | undefined {
  if (!password) return 'Type a password.';
  if (password.length > MAX_PASSWORD_LENGTH) return `The password must be at most ${MAX_PASSWORD_LENGTH} characters.`;
  if (password.includes('\u0000')) return 'The password must not contain NUL characters.';
  if (password !== again) return 'The two passwords differ: type the same password twice.';
  return undefined;
}

/** "new_password: must be at least 10 characters" (a validation_error) as a sentence about the password. */
export function passwordSentence(message: string): string {
  const problem = message.replace(/^[a-z_]+: /, '');
  return `The password ${problem}.`;
}

export const PROBLEM_ID = 'problem';

/** The hidden token and the two password inputs; with a problem, it is announced and the inputs point at it. */
export function passwordFields(o: { token: string; name: string; label: string; minLength: number; problem: string | undefined }): SafeHtml {
  const described = o.problem ? `${PROBLEM_ID} password-rules` : 'password-rules';
  const invalid = o.problem ? html` aria-invalid="true"` : '';
  return html`<input type="hidden" name="token" value="${o.token}">
<label for="${o.name}">${o.label}</label>
<input id="${o.name}" name="${o.name}" type="password" autocomplete="new-password" required minlength="${o.minLength}" maxlength="${MAX_PASSWORD_LENGTH}" aria-describedby="${described}"${invalid}>
<p class="hint" id="password-rules">At least ${o.minLength} characters, mixing at least two of lowercase letters, uppercase letters, digits and symbols, and not containing your e-mail address or the workspace name.</p>
<label for="${o.name}_again">Type the password again</label>
<input id="${o.name}_again" name="${o.name}_again" type="password" autocomplete="new-password" required maxlength="${MAX_PASSWORD_LENGTH}"${invalid}>`;
}

/** The problem box shown above a form that can be sent again. */
export function formProblem(problem: string | undefined): SafeHtml | string {
  return problem ? notice('problem', 'That did not work', problem, PROBLEM_ID) : '';
}

/** A link that cannot be used as is (no token, or a mangled one): nothing to post. */
export const brokenLinkText =
  'This link is incomplete or damaged. Open the link from the e-mail again; if your e-mail program split it over two lines, copy the whole address into the browser.';
