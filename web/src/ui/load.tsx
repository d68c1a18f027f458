// Data a page reads from the API: loading, then the data or the API's refusal, loaded again when its inputs change or
// after a change of the page's own. The one hook every page loads with, so every page behaves alike under fast clicks.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ErrorNotice } from './form';

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
}

export interface Load<T> extends Loaded<T> {
  /** Loads again now (after a change, or a Refresh button); resolves once this call's answer is shown or dropped. */
  reload: () => Promise<void>;
}

/**
 * Runs `load` now, whenever `inputs` change, and on reload(). The latest call wins: an older answer arriving late
 * never replaces a newer one (a fast click never shows old data), and a reload asked for while a load runs is never
 * dropped. The data stays shown while the next load runs. `show`, when given, gets each answer that wins, from the
 * same render as the `load` that fetched it: for a page that copies the answer into state it then edits or appends
 * to (a form, a list that grows by "Show older").
 */
export function useLoad<T>(load: () => Promise<T>, inputs: unknown[], show?: (data: T) => void): Load<T> {
  const [state, setState] = useState<Loaded<T>>({ data: undefined, error: undefined, loading: true });
  const latest = useRef(0);
  // This render's functions: a call takes both at its start, so an answer is shown by the code that asked for it.
  const current = useRef({ load, show });
  current.current = { load, show };
  const reload = async () => {
    const call = ++latest.current;
    const { load: fetch, show: adopt } = current.current;
    setState((s) => ({ ...s, loading: true, error: undefined }));
    try {
      const data = await fetch();
      if (call !== latest.current) return;
      adopt?.(data);
      setState({ data, error: undefined, loading: false });
    } catch (error) {
      if (call === latest.current) setState((s) => ({ ...s, error, loading: false }));
    }
  };
  useEffect(() => {
    void reload();
    // Gone or moved on: whatever this load answers is stale.
    return () => void ++latest.current;
  }, inputs);
  return { ...state, reload };
}

/** A section's body: "Loading…" (announced), the refusal as the API wrote it, or the children with the data. */
export function Loading<T>(props: { state: Loaded<T>; what: string; children: (data: T) => ComponentChildren }) {
  if (props.state.error !== undefined) return <ErrorNotice error={props.state.error} />;
  if (props.state.data === undefined)
    return (
      <p class="muted" role="status">
        Loading {props.what}…
      </p>
    );
  return <>{props.children(props.state.data)}</>;
}
