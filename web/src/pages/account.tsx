// The signed-in user's account: change the password, and two-factor sign-in (enrol with the QR code, recovery
// codes shown once, turn off).
import { useState } from 'preact/hooks';
import { api, unwrap } from '../api';
import { adoptSession, identity } from '../session';
import { SecretOnce } from '../ui/copy';
import { ErrorNotice, Field, Form, Notice, Submit, useAction } from '../ui/form';
import { useTitle } from '../ui/layout';
import { useLoad } from '../ui/load';

function ChangePassword() {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [done, setDone] = useState(false);
  const change = useAction(async () => {
    setDone(false);
    await adoptSession(await unwrap(api.POST('/auth/session/password', { body: { current_password: current, new_password: next } })));
    setCurrent('');
    setNext('');
    setDone(true);
  });
  return (
    <section class="card" aria-labelledby="password-heading">
      <h2 id="password-heading">Password</h2>
      {done && (
        <Notice kind="done" title="Password changed">
          Every other session of yours has ended; this one goes on.
        </Notice>
      )}
      <ErrorNotice error={change.error} />
      <Form onSubmit={change.run} label="Change password">
        <Field label="Current password" name="current_password" type="password" value={current} onInput={setCurrent} autoComplete="current-password" required />
        <Field
          label="New password"
          name="new_password"
          type="password"
          value={next}
          onInput={setNext}
          autoComplete="new-password"
          hint="At least 10 characters mixing two kinds (letters, digits, symbols)."
          error={change.fieldError('new_password')}
          required
        />
        <Submit busy={change.busy}>Change password</Submit>
      </Form>
    </section>
  );
}

type Status = { enabled: boolean; enabled_at: string | null; recovery_codes_remaining: number };
type Enrolment = { secret: string; otpauth_url: string; qr_code_dataurl: string };

function TwoFactor() {
  const [status, setStatus] = useState<Status | undefined>(undefined);
  const [enrolment, setEnrolment] = useState<Enrolment | undefined>(undefined);
  const [codes, setCodes] = useState<string[] | undefined>(undefined);
  const [code, setCode] = useState('');
  const [password, setPassword] = useState('');
  const load = useLoad(() => unwrap(api.GET('/auth/2fa/status')), [], setStatus);
  const enrol = useAction(async () => setEnrolment(await unwrap(api.POST('/auth/2fa/enroll'))));
  const verify = useAction(async () => {
    const answer = await unwrap(api.POST('/auth/2fa/verify', { body: { code } }));
    setCodes(answer.recovery_codes);
    setEnrolment(undefined);
    setCode('');
    setStatus(await unwrap(api.GET('/auth/2fa/status')));
  });
  const disable = useAction(async () => {
    await unwrap(api.POST('/auth/2fa/disable', { body: { password } }));
    setPassword('');
    setCodes(undefined);
    setStatus(await unwrap(api.GET('/auth/2fa/status')));
  });

  return (
    <section class="card" aria-labelledby="twofactor-heading">
      <h2 id="twofactor-heading">Two-factor sign-in</h2>
      <ErrorNotice error={load.error ?? enrol.error} />
      {codes && (
        <Notice kind="warning" title="Save your recovery codes now">
          Each signs you in once if you lose your authenticator. They are not shown again.
        </Notice>
      )}
      {codes && (
        <>
          <ol class="codes" data-testid="recovery-codes">
            {codes.map((c) => (
              <li key={c}>{c}</li>
            ))}
          </ol>
          <SecretOnce value={codes.join('\n')} label="recovery codes" />
        </>
      )}
      {status && !status.enabled && !enrolment && (
        <>
          <p>Off. With it on, signing in also asks for a code from an authenticator app.</p>
          <button type="button" onClick={() => enrol.run()} disabled={enrol.busy}>
            Set up two-factor sign-in
          </button>
        </>
      )}
      {enrolment && (
        <>
          <p>Scan this code with your authenticator app, or type the key in, then enter the 6-digit code it shows.</p>
          <img src={enrolment.qr_code_dataurl} alt="QR code of the authenticator key" width={200} height={200} />
          <p>
            Key: <code data-testid="totp-secret">{enrolment.secret}</code>
          </p>
          <ErrorNotice error={verify.error} />
          <Form onSubmit={verify.run} label="Confirm two-factor sign-in">
            <Field label="Code from the app" name="code" value={code} onInput={setCode} inputMode="numeric" autoComplete="one-time-code" required />
            <Submit busy={verify.busy}>Turn on</Submit>
          </Form>
        </>
      )}
      {status?.enabled && (
        <>
          <p>
            <span class="badge ok">On</span> since {new Date(status.enabled_at!).toLocaleString()}; {status.recovery_codes_remaining} recovery codes left.
          </p>
          <ErrorNotice error={disable.error} />
          <Form onSubmit={disable.run} label="Turn off two-factor sign-in">
            <Field label="Password" name="disable-password" type="password" value={password} onInput={setPassword} autoComplete="current-password" required />
            <Submit busy={disable.busy} class="danger">
              Turn off
            </Submit>
          </Form>
        </>
      )}
    </section>
  );
}

export default function Account() {
  useTitle('Account');
  const who = identity.value;
  return (
    <>
      <h1>Account</h1>
      <p class="muted">
        {who?.user?.email} · {who?.user?.role} of {who?.tenant.name}
      </p>
      <ChangePassword />
      <TwoFactor />
    </>
  );
}
