// The audience pages' own navigation (the main one has a single Audiences entry): contacts, lists and imports, each
// page's heading under it.
import type { ComponentChildren } from 'preact';
import { useLocation } from 'preact-iso/router';
import { useTitle } from '../../ui/layout';

const PAGES = [
  { href: '/app/audiences/contacts', label: 'Contacts' },
  { href: '/app/audiences/lists', label: 'Lists' },
  { href: '/app/audiences/segments', label: 'Segments' },
  { href: '/app/audiences/imports', label: 'Imports' },
  { href: '/app/audiences/suppressions', label: 'Suppressions' },
];

export function AudiencePage(props: { title: string; lead?: ComponentChildren; children: ComponentChildren }) {
  useTitle(props.title);
  const { path } = useLocation();
  return (
    <>
      <nav aria-label="Audiences" class="subnav">
        <ul>
          {PAGES.map((p) => (
            <li key={p.href}>
              <a href={p.href} aria-current={path === p.href || path.startsWith(`${p.href}/`) ? 'page' : undefined}>
                {p.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <h1>{props.title}</h1>
      {props.lead && <p class="muted lead">{props.lead}</p>}
      {props.children}
    </>
  );
}

/** A count as the user's locale writes it, with the noun in the singular or the plural. */
export function counted(n: number, one: string, many: string): string {
  return `${n.toLocaleString()} ${n === 1 ? one : many}`;
}
