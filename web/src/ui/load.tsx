// Data a page reads from the API: loading, then the data or the API's refusal, loaded again when its inputs change or
// after a change of the page's own. The one hook every page loads with, so every page behaves alike under fast clicks.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api';
import { ErrorNotice } from './form';

/** How often a page that watches something moving (an import, a sending campaign) reads it again. */
export const WATCH_MS = 3000;
/** A 429 without a usable Retry-After waits this long. */
const RATE_LIMITED_MS = 10_000;

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

/** How long the API asked to wait when `error` is its rate limit (429), in milliseconds; undefined for anything else. */
export function rateLimitWait(error: unknown): number | undefined {
  if (!(error instanceof ApiError && error.status === 429)) return undefined;
  return Math.max(WATCH_MS, error.retryAfter === undefined ? RATE_LIMITED_MS : error.retryAfter * 1000);
}

/**
 * While `active`, calls `refresh` WATCH_MS after each answer. A 429 waits the Retry-After the API asked for (its limit
 * is per principal: reading sooner would only be refused again, and would hold back the user's other pages); any other
 * refusal ends the watch, so a page left open never keeps asking an API that refuses it.
 */
export function useWatch(active: boolean, state: Loaded<unknown>, refresh: () => void): void {
  const wait = rateLimitWait(state.error);
  const ended = state.error !== undefined && wait === undefined;
  useEffect(() => {
    if (!active || state.loading || ended) return;
    const timer = setTimeout(refresh, wait ?? WATCH_MS);
    return () => clearTimeout(timer);
  }, [active, state.data, state.error, state.loading]);
}

/**
 * A section's body: "Loading…" (announced), the refusal as the API wrote it, or the children with the data. A rate
 * limit met while data is shown keeps the data, with a line saying it is from the last read.
 */
export function Loading<T>(props: { state: Loaded<T>; what: string; children: (data: T) => ComponentChildren }) {
  const { data, error } = props.state;
  const wait = rateLimitWait(error);
  if (error !== undefined && (data === undefined || wait === undefined)) return <ErrorNotice error={error} />;
  if (data === undefined)
    return (
      <p class="muted" role="status">
        Loading {props.what}…
      </p>
    );
  return (
    <>
      {wait !== undefined && (
        <p class="muted" role="status" data-testid="rate-limited">
          Mailpath asked to wait {Math.ceil(wait / 1000)} s before the next read: this is {props.what} as last read.
        </p>
      )}
      {props.children(data)}
    </>
  );
}
