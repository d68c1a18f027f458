// Sign in: email and password, then, when two-factor sign-in is on, a code from the authenticator or a recovery code.
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso/router';
import { api, unwrap } from '../api';
import { nextPath } from '../app';
import { adoptSession } from '../session';
import { AuthLayout } from '../ui/layout';
import { ErrorNotice, Field, Form, Submit, useAction } from '../ui/form';

export default function SignIn() {
  const { query, route } = useLocation();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [challenge, setChallenge] = useState<string | undefined>(undefined);
  const [code, setCode] = useState('');
  const [useRecovery, setUseRecovery] = useState(false);

  const signIn = useAction(async () => {
    const answer = await unwrap(api.POST('/auth/session', { body: { email, password } }));
    if ('requires_totp' in answer) {
      setChallenge(answer.totp_session_token);
      return;
    }
    await adoptSession(answer);
    route(nextPath(query), true);
  });
  const verify = useAction(async () => {
    const session = await unwrap(api.POST('/auth/session/2fa', { body: { totp_session_token: challenge!, code: code.trim() } }));
    await adoptSession(session);
    route(nextPath(query), true);
  });

  if (challenge) {
    return (
      <AuthLayout title="Two-factor sign-in">
        <ErrorNotice error={verify.error} />
        <Form onSubmit={verify.run} label="Two-factor code">
          {useRecovery ? (
            <Field
              label="Recovery code"
              name="recovery-code"
              value={code}
              onInput={setCode}
              autoComplete="one-time-code"
              hint="One of the codes you saved when you turned two-factor sign-in on, e.g. k7m2x-9qfpa. Each works once."
              required
            />
          ) : (
            <Field
              label="Authenticator code"
              name="totp"
              value={code}
              onInput={setCode}
              inputMode="numeric"
              autoComplete="one-time-code"
              hint="The 6-digit code your authenticator app shows for Mailpath."
              required
            />
          )}
          <div class="actions">
            <Submit busy={verify.busy}>Verify</Submit>
            <button
              type="button"
              class="link"
              onClick={() => {
                setUseRecovery(!useRecovery);
                setCode('');
              }}
            >
              {useRecovery ? 'Use the authenticator code instead' : 'Use a recovery code instead'}
            </button>
          </div>
        </Form>
      </AuthLayout>
    );
  }

  return (
    <AuthLayout title="Sign in">
      <ErrorNotice error={signIn.error} />
      <Form onSubmit={signIn.run} label="Sign in">
        <Field label="Email" name="email" type="email" value={email} onInput={setEmail} autoComplete="username" required />
        <Field label="Password" name="password" type="password" value={password} onInput={setPassword} autoComplete="current-password" required />
        <Submit busy={signIn.busy}>Sign in</Submit>
      </Form>
      <div class="auth-links">
        <a href="/app/forgot-password">Forgot your password?</a>
        <a href="/app/register">Create an account</a>
      </div>
    </AuthLayout>
  );
}
