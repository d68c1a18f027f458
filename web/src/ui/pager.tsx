// Paging by the API's cursors, which only lead forward: the cursors of the pages before this one are kept so
// "Previous page" can go back, and a new search starts again at the first page.
import { useState } from 'preact/hooks';

export function useCursorPages() {
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  return {
    /** The cursor of the page shown (undefined: the first). */
    after: cursors.at(-1),
    /** 1 for the first page. */
    number: cursors.length,
    forward: (next: string) => setCursors((c) => [...c, next]),
    back: () => setCursors((c) => (c.length > 1 ? c.slice(0, -1) : c)),
    restart: () => setCursors([undefined]),
  };
}

export function CursorPager(props: { label: string; pages: ReturnType<typeof useCursorPages>; next: string | null; loading: boolean }) {
  const { pages, next } = props;
  return (
    <nav class="pager" aria-label={props.label}>
      <button type="button" class="secondary" disabled={pages.number === 1 || props.loading} onClick={pages.back}>
        Previous page
      </button>
      <button type="button" class="secondary" disabled={!next || props.loading} onClick={() => next && pages.forward(next)}>
        Next page
      </button>
    </nav>
  );
}
