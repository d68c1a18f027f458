// A section of the app with pages of its own (settings, audiences): its navigation, which marks the current page, then
// the page's heading and lead. The main navigation has one entry for the whole section.
import type { ComponentChildren } from 'preact';
import { useLocation } from 'preact-iso/router';
import { useTitle } from './layout';

export function SectionPage(props: {
  section: string;
  pages: { href: string; label: string }[];
  title: string;
  lead?: ComponentChildren;
  children: ComponentChildren;
}) {
  useTitle(props.title);
  const { path } = useLocation();
  return (
    <>
      <nav aria-label={props.section} class="subnav">
        <ul>
          {props.pages.map((p) => (
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
