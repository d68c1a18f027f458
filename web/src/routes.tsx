// Every page of the dashboard, one line each: its path under /app, whether it needs a session, and its module
// (loaded when first visited, so the first page carries only its own code).
import type { AnyComponent } from 'preact';
import lazy from 'preact-iso/lazy';

export interface PageRoute {
  path: string;
  /** Reachable signed out (sign-in, registration, reset, invite); every other page needs a session. */
  public?: boolean;
  component: LazyPage;
}

type LazyPage = AnyComponent<Record<string, unknown>> & { preload(): Promise<unknown> };

// A page takes no props (it reads its path parameters with useRoute()).
const page = (load: () => Promise<{ default: AnyComponent<object> }>) => lazy(load) as unknown as LazyPage;

export const ROUTES: PageRoute[] = [
  { path: '/app/sign-in', public: true, component: page(() => import('./pages/sign-in')) },
  { path: '/app/register', public: true, component: page(() => import('./pages/register')) },
  { path: '/app/forgot-password', public: true, component: page(() => import('./pages/forgot-password')) },
  { path: '/app/reset-password', public: true, component: page(() => import('./pages/reset-password')) },
  { path: '/app/accept-invite', public: true, component: page(() => import('./pages/accept-invite')) },
  { path: '/app/', component: page(() => import('./pages/overview')) },
  { path: '/app/activity', component: page(() => import('./pages/activity')) },
  { path: '/app/activity/:id', component: page(() => import('./pages/message')) },
  { path: '/app/account', component: page(() => import('./pages/account')) },
  { path: '/app/settings/keys', component: page(() => import('./pages/settings/keys')) },
  { path: '/app/settings/keys/:id', component: page(() => import('./pages/settings/key')) },
  { path: '/app/settings/team', component: page(() => import('./pages/settings/team')) },
  { path: '/app/settings/sender', component: page(() => import('./pages/settings/sender')) },
  { path: '/app/settings/audit', component: page(() => import('./pages/settings/audit')) },
  { path: '/app/onboarding', component: page(() => import('./pages/onboarding')) },
  { path: '/app/domains', component: page(() => import('./pages/domains')) },
  { path: '/app/domains/:id', component: page(() => import('./pages/domain')) },
  { path: '/app/audiences/contacts', component: page(() => import('./pages/audiences/contacts')) },
  { path: '/app/audiences/contacts/:id', component: page(() => import('./pages/audiences/contact')) },
  { path: '/app/audiences/lists', component: page(() => import('./pages/audiences/lists')) },
  { path: '/app/audiences/lists/:id', component: page(() => import('./pages/audiences/list')) },
  { path: '/app/audiences/segments', component: page(() => import('./pages/audiences/segments')) },
  { path: '/app/audiences/segments/:id', component: page(() => import('./pages/audiences/segment')) },
  { path: '/app/audiences/imports', component: page(() => import('./pages/audiences/imports')) },
  { path: '/app/audiences/imports/:id', component: page(() => import('./pages/audiences/import')) },
  { path: '/app/campaigns', component: page(() => import('./pages/campaigns/campaigns')) },
  { path: '/app/campaigns/:id', component: page(() => import('./pages/campaigns/campaign')) },
  { path: '/app/templates', component: page(() => import('./pages/templates/templates')) },
  { path: '/app/templates/:id', component: page(() => import('./pages/templates/template')) },
  { path: '/app/audiences/fields', component: page(() => import('./pages/audiences/fields')) },
  { path: '/app/audiences/md5-lists', component: page(() => import('./pages/audiences/md5-lists')) },
  { path: '/app/audiences/md5-lists/:id', component: page(() => import('./pages/audiences/md5-list')) },
  { path: '/app/audiences/suppressions', component: page(() => import('./pages/audiences/suppressions')) },
  { path: '/app/analytics', component: page(() => import('./pages/analytics/analytics')) },
  { path: '/app/inbound', component: page(() => import('./pages/inbound')) },
  { path: '/app/inbound/:mailbox/:message', component: page(() => import('./pages/inbound-message')) },
  { path: '/app/webhooks', component: page(() => import('./pages/webhooks')) },
  { path: '/app/webhooks/:id', component: page(() => import('./pages/webhook')) },
];

/** The main navigation, in the order a sender needs it. */
export const NAVIGATION: { href: string; label: string }[] = [
  { href: '/app/', label: 'Overview' },
  { href: '/app/onboarding', label: 'Get started' },
  { href: '/app/domains', label: 'Domains' },
  { href: '/app/activity', label: 'Activity' },
  // One entry for the audience pages: their own navigation (pages/audiences/nav.tsx) moves between them.
  { href: '/app/audiences/contacts', label: 'Audiences' },
  { href: '/app/campaigns', label: 'Campaigns' },
  { href: '/app/templates', label: 'Templates' },
  { href: '/app/analytics', label: 'Analytics' },
  { href: '/app/inbound', label: 'Inbound' },
  { href: '/app/webhooks', label: 'Webhooks' },
  { href: '/app/account', label: 'Account' },
  // One entry for every settings page: their own navigation (pages/settings/nav.tsx) moves between them.
  { href: '/app/settings/keys', label: 'Settings' },
];
