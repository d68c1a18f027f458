// Join a team from an invite link (?token=): choose a password, signed in at once with the invited role.
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso/router';
import { api, unwrap } from '../api';
import { adoptSession } from '../session';
import { AuthLayout } from '../ui/layout';
import { ErrorNotice, Field, Form, Notice, Submit, useAction } from '../ui/form';

export default function AcceptInvite() {
  const { query, route } = useLocation();
  const token = query['token'] ?? '';
  const [password, setPassword] = useState('');
  const [firstName, setFirstName] = useState('');
  const accept = useAction(async () => {
    const body = { token, password, ...(firstName.trim() ? { first_name: firstName } : {}) };
    await adoptSession(await unwrap(api.POST('/auth/session/accept-invite', { body })));
    route('/app/', true);
  });
  return (
    <AuthLayout title="Join your team">
      {!token && (
        <Notice kind="problem" title="This link is incomplete">
          Open the invite link from the e-mail as it is.
        </Notice>
      )}
      <p>Choose a password to create your account. You sign in with the e-mail address the invite was sent to.</p>
      <ErrorNotice error={accept.error} />
      <Form onSubmit={accept.run} label="Join your team">
        <Field label="Your first name" name="first_name" value={firstName} onInput={setFirstName} autoComplete="given-name" />
        <Field
          label="Choose a password"
          name="password"
          type="password"
          value={password}
          onInput={setPassword}
          autoComplete="new-password"
          hint="At least 10 characters mixing two kinds (letters, digits, symbols), without your address."
          error={accept.fieldError('password')}
          required
        />
        <Submit busy={accept.busy}>Join</Submit>
      </Form>
    </AuthLayout>
  );
}
