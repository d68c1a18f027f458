// The audience pages' own navigation (the main one has a single Audiences entry): contacts, lists, segments, fields,
// imports, suppressions and MD5 lists, each page's heading under it.
import type { ComponentChildren } from 'preact';
import { SectionPage } from '../../ui/section';

const PAGES = [
  { href: '/app/audiences/contacts', label: 'Contacts' },
  { href: '/app/audiences/lists', label: 'Lists' },
  { href: '/app/audiences/segments', label: 'Segments' },
  { href: '/app/audiences/fields', label: 'Custom fields' },
  { href: '/app/audiences/imports', label: 'Imports' },
  { href: '/app/audiences/suppressions', label: 'Suppressions' },
  { href: '/app/audiences/md5-lists', label: 'MD5 lists' },
];

export function AudiencePage(props: { title: string; lead?: ComponentChildren; children: ComponentChildren }) {
  return <SectionPage section="Audiences" pages={PAGES} {...props} />;
}

/** A count as the user's locale writes it, with the noun in the singular or the plural. */
export function counted(n: number, one: string, many: string): string {
  return `${n.toLocaleString()} ${n === 1 ? one : many}`;
}
