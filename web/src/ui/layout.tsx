// The signed-in shell: a skip link, the header (tenant, theme, sign out), the navigation and the page's main landmark;
// and the plain layout of the sign-in pages.
import type { ComponentChildren } from 'preact';
import { useEffect } from 'preact/hooks';
import { useLocation } from 'preact-iso/router';
import { identity, signOut } from '../session';
import { setTheme, theme, type Theme } from './theme';
import { NAVIGATION } from '../routes';

/** Sets the document title, so each page is announced and named in the history. */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} – Mailpath`;
  }, [title]);
}

function ThemePicker() {
  return (
    <label class="theme-picker">
      <span class="visually-hidden">Theme</span>
      <select value={theme.value} onChange={(e) => setTheme((e.currentTarget as HTMLSelectElement).value as Theme)}>
        <option value="system">System theme</option>
        <option value="light">Light</option>
        <option value="dark">Dark</option>
      </select>
    </label>
  );
}

export function Shell(props: { children: ComponentChildren }) {
  const { path, route } = useLocation();
  const who = identity.value;
  return (
    <div class="shell">
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header>
        <a class="brand" href="/app/">
          Mailpath
        </a>
        <div class="header-end">
          {who && (
            <span class="muted" data-testid="tenant-name">
              {who.tenant.name} · {who.user?.email}
            </span>
          )}
          <ThemePicker />
          <button
            type="button"
            class="secondary"
            onClick={async () => {
              await signOut();
              route('/app/sign-in');
            }}
          >
            Sign out
          </button>
        </div>
      </header>
      <nav aria-label="Main">
        <ul>
          {NAVIGATION.map((item) => (
            <li key={item.href}>
              <a href={item.href} aria-current={isCurrent(path, item.href) ? 'page' : undefined}>
                {item.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        {props.children}
      </main>
    </div>
  );
}

function isCurrent(path: string, href: string): boolean {
  const normal = path.endsWith('/') ? path : `${path}/`;
  // Settings is one entry for all its pages (keys, team, sender, audit): any of them makes it current.
  if (href.startsWith('/app/settings/')) return normal.startsWith('/app/settings/');
  if (href.startsWith('/app/audiences/')) return normal.startsWith('/app/audiences/');
  return href === '/app/' ? normal === '/app/' : normal.startsWith(href.endsWith('/') ? href : `${href}/`);
}

export function AuthLayout(props: { title: string; children: ComponentChildren }) {
  useTitle(props.title);
  return (
    <main class="auth" id="main">
      <p class="brand">Mailpath</p>
      <div class="card">
        <h1>{props.title}</h1>
        {props.children}
      </div>
      <ThemePicker />
    </main>
  );
}
