// Register a tenant with its first user (the owner); signed in at once, onto the getting-started checklist.
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso/router';
import { api, unwrap } from '../api';
import { adoptSession } from '../session';
import { AuthLayout } from '../ui/layout';
import { ErrorNotice, Field, Form, Submit, useAction } from '../ui/form';

/** A URL-safe slug from a company name, as a suggestion the user may change. */
function slugOf(name: string): string {
  return name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
}

export default function Register() {
  const { route } = useLocation();
  const [tenantName, setTenantName] = useState('');
  const [slug, setSlug] = useState('');
  const [slugEdited, setSlugEdited] = useState(false);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [firstName, setFirstName] = useState('');
  const register = useAction(async () => {
    const body = { tenant_name: tenantName, tenant_slug: slug, email, password, ...(firstName.trim() ? { first_name: firstName } : {}) };
    await adoptSession(await unwrap(api.POST('/auth/session/register', { body })));
    route('/app/onboarding', true);
  });
  return (
    <AuthLayout title="Create your account">
      <ErrorNotice error={register.error} />
      <Form onSubmit={register.run} label="Create your account">
        <Field
          label="Company or workspace name"
          name="tenant_name"
          value={tenantName}
          onInput={(v) => {
            setTenantName(v);
            if (!slugEdited) setSlug(slugOf(v));
          }}
          error={register.fieldError('tenant_name')}
          required
        />
        <Field
          label="Workspace address"
          name="tenant_slug"
          value={slug}
          onInput={(v) => {
            setSlug(v);
            setSlugEdited(true);
          }}
          hint="3–40 lowercase letters, digits and inner hyphens."
          error={register.fieldError('tenant_slug')}
          required
        />
        <Field label="Your first name" name="first_name" value={firstName} onInput={setFirstName} autoComplete="given-name" />
        <Field label="Email" name="email" type="email" value={email} onInput={setEmail} autoComplete="username" error={register.fieldError('email')} required />
        <Field
          label="Password"
          name="password"
          type="password"
          value={password}
          onInput={setPassword}
          autoComplete="new-password"
          hint="At least 10 characters mixing two kinds (letters, digits, symbols), without your address or the workspace name."
          error={register.fieldError('password')}
          required
        />
        <Submit busy={register.busy}>Create account</Submit>
      </Form>
      <div class="auth-links">
        <a href="/app/sign-in">Already have an account? Sign in</a>
      </div>
    </AuthLayout>
  );
}
