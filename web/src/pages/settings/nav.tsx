// The settings pages' own navigation (the main one has a single Settings entry): keys, team, sender, audit log, and
// the account page, each page's heading under it.
import type { ComponentChildren } from 'preact';
import { SectionPage } from '../../ui/section';

const PAGES = [
  { href: '/app/settings/keys', label: 'API keys' },
  { href: '/app/settings/team', label: 'Team' },
  { href: '/app/settings/sender', label: 'Sender' },
  { href: '/app/settings/audit', label: 'Audit log' },
  { href: '/app/account', label: 'Your account' },
];

export function SettingsPage(props: { title: string; lead?: ComponentChildren; children: ComponentChildren }) {
  return <SectionPage section="Settings" pages={PAGES} {...props} />;
}

/** A date and time as the user's locale writes it; a dash for none. */
export function when(value: string | null | undefined): string {
  return value ? new Date(value).toLocaleString() : '—';
}

/** A table that may scroll sideways on a phone: a named region keyboard users can focus and scroll. */
export function TableWrap(props: { label: string; children: ComponentChildren }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be focusable to scroll by keyboard (WCAG 2.1.1).
    <section class="table-wrap" aria-label={props.label} tabIndex={0}>
      {props.children}
    </section>
  );
}
