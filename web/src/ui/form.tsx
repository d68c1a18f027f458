// Form building blocks: a labelled field whose hint and error are tied to it for screen readers, a submit button
// that shows it is busy, and the API's refusal shown as the API wrote it.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError } from '../api';

let nextId = 0;
const useFieldId = (name: string) => useState(() => `f-${name}-${++nextId}`)[0];

interface InputProps {
  type?: 'text' | 'email' | 'password' | 'url' | 'number' | 'search' | 'datetime-local' | 'date';
  autoComplete?: string;
  inputMode?: 'numeric' | 'text' | 'email' | 'url';
  required?: boolean;
  placeholder?: string;
  maxLength?: number;
  autoFocus?: boolean;
  spellcheck?: boolean;
}

export function Field(
  props: InputProps & { label: string; name: string; value: string; onInput: (value: string) => void; hint?: string; error?: string | undefined },
) {
  const { label, name, value, onInput, hint, error, type = 'text', ...rest } = props;
  const id = useFieldId(name);
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        {...rest}
        // The union of <input> types is discriminated by `type`; a literal from the props' own union satisfies it.
        type={type as 'text'}
        id={id}
        name={name}
        value={value}
        onInput={(e) => onInput((e.currentTarget as HTMLInputElement).value)}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={described}
      />
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {error && (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </div>
  );
}

export function Notice(props: { kind?: 'problem' | 'done' | 'warning' | 'info'; title?: string; children?: ComponentChildren }) {
  const kind = props.kind ?? 'info';
  return (
    <div class={`notice ${kind}`} role={kind === 'problem' ? 'alert' : 'status'}>
      {props.title && <strong>{props.title}</strong>}
      {props.children && <p>{props.children}</p>}
    </div>
  );
}

/** The message of a refusal, for a person: the API's own words, with when to retry after a 429. */
export function messageOf(err: unknown): string {
  if (err instanceof ApiError) return err.retryAfter ? `${err.message} (try again in ${err.retryAfter} s)` : err.message;
  return err instanceof Error ? err.message : String(err);
}

export function ErrorNotice(props: { error: unknown }) {
  if (props.error === undefined || props.error === null) return null;
  const title = props.error instanceof ApiError && props.error.status === 404 ? 'Not found' : 'That did not work';
  return (
    <Notice kind="problem" title={title}>
      {messageOf(props.error)}
    </Notice>
  );
}

/**
 * Runs an action for a form or button: busy while it runs (so it is not sent twice), its refusal kept to show.
 * The field the API named in a validation error is `fieldError(name)`.
 */
export function useAction<A extends unknown[]>(action: (...args: A) => Promise<void>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const run = async (...args: A) => {
    if (busy) return;
    setBusy(true);
    setError(undefined);
    try {
      await action(...args);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const fieldError = (name: string) =>
    error instanceof ApiError && error.slug === 'validation_error' && error.message.startsWith(`${name}:`) ? error.message : undefined;
  return { busy, error, run, fieldError, setError };
}

/** A form that runs its action on submit (Enter included) without leaving the page. */
export function Form(props: { onSubmit: () => void; children: ComponentChildren; label?: string }) {
  return (
    <form
      aria-label={props.label}
      onSubmit={(e) => {
        e.preventDefault();
        props.onSubmit();
      }}
      noValidate
    >
      {props.children}
    </form>
  );
}

export function Submit(props: { busy: boolean; children: ComponentChildren; class?: string }) {
  return (
    <button type="submit" class={props.class} disabled={props.busy} aria-busy={props.busy ? 'true' : undefined}>
      {props.busy ? 'Working…' : props.children}
    </button>
  );
}

/** The addresses typed into one field, separated by spaces, commas or semicolons. */
export function addressesIn(text: string): string[] {
  return text
    .split(/[\s,;]+/)
    .map((e) => e.trim())
    .filter(Boolean);
}
