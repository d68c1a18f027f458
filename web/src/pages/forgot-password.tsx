// Ask for a password reset link by e-mail. The answer is the same whether or not the address has an account.
import { useState } from 'preact/hooks';
import { api, unwrap } from '../api';
import { AuthLayout } from '../ui/layout';
import { ErrorNotice, Field, Form, Notice, Submit, useAction } from '../ui/form';

export default function ForgotPassword() {
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState(false);
  const request = useAction(async () => {
    await unwrap(api.POST('/auth/password-reset/request', { body: { email } }));
    setSent(true);
  });
  return (
    <AuthLayout title="Reset your password">
      {sent ? (
        <Notice kind="done" title="Check your inbox">
          If {email} has an account, a link to set a new password is on its way. It works once and expires.
        </Notice>
      ) : (
        <>
          <ErrorNotice error={request.error} />
          <Form onSubmit={request.run} label="Reset your password">
            <Field label="Email" name="email" type="email" value={email} onInput={setEmail} autoComplete="username" required />
            <Submit busy={request.busy}>Send reset link</Submit>
          </Form>
        </>
      )}
      <div class="auth-links">
        <a href="/app/sign-in">Back to sign in</a>
      </div>
    </AuthLayout>
  );
}
