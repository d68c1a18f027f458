// Set a new password with the token of a reset link (?token=).
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso/router';
import { api, unwrap } from '../api';
import { AuthLayout } from '../ui/layout';
import { ErrorNotice, Field, Form, Notice, Submit, useAction } from '../ui/form';

export default function ResetPassword() {
  const { query } = useLocation();
  const token = query['token'] ?? '';
  const [password, setPassword] = useState('');
  const [done, setDone] = useState(false);
  const reset = useAction(async () => {
    await unwrap(api.POST('/auth/password-reset/confirm', { body: { token, new_password: password } }));
    setDone(true);
  });
  return (
    <AuthLayout title="Set a new password">
      {!token && (
        <Notice kind="problem" title="This link is incomplete">
          Open the link from the e-mail as it is, or ask for a new one.
        </Notice>
      )}
      {done ? (
        <Notice kind="done" title="Password changed">
          Your other sessions have ended. <a href="/app/sign-in">Sign in</a> with the new password.
        </Notice>
      ) : (
        <>
          <ErrorNotice error={reset.error} />
          <Form onSubmit={reset.run} label="Set a new password">
            <Field
              label="New password"
              name="new_password"
              type="password"
              value={password}
              onInput={setPassword}
              autoComplete="new-password"
              hint="At least 10 characters mixing two kinds (letters, digits, symbols)."
              error={reset.fieldError('new_password')}
              required
            />
            <Submit busy={reset.busy}>Set password</Submit>
          </Form>
        </>
      )}
      <div class="auth-links">
        <a href="/app/forgot-password">Ask for a new link</a>
      </div>
    </AuthLayout>
  );
}
