// A destructive action behind a confirmation: a modal <dialog> (showModal traps focus and Escape closes it), focus on
// the safe choice first, and back on the button that opened it when it closes.
import type { ComponentChildren } from 'preact';
import { useRef } from 'preact/hooks';

let nextId = 0;

export function ConfirmButton(props: {
  /** The button's text (and the dialog's confirm button). */
  label: string;
  /** An accessible name when the visible label is not enough (e.g. which key). */
  ariaLabel?: string;
  title: string;
  children: ComponentChildren;
  onConfirm: () => void;
  busy?: boolean;
  class?: string;
  /** primary: a step forward (sending), not a loss; the buttons are then not red. */
  tone?: 'danger' | 'primary';
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const opener = useRef<HTMLButtonElement>(null);
  const cancel = useRef<HTMLButtonElement>(null);
  const id = useRef(`confirm-${++nextId}`).current;
  const close = () => {
    dialog.current?.close();
    opener.current?.focus();
  };
  return (
    <>
      <button
        type="button"
        ref={opener}
        class={props.class ?? (props.tone === 'primary' ? undefined : 'danger')}
        aria-label={props.ariaLabel}
        disabled={props.busy}
        onClick={() => {
          dialog.current?.showModal();
          cancel.current?.focus();
        }}
      >
        {props.label}
      </button>
      <dialog ref={dialog} class="confirm" aria-labelledby={`${id}-title`} aria-describedby={`${id}-body`} onClose={() => opener.current?.focus()}>
        <h2 id={`${id}-title`}>{props.title}</h2>
        <div id={`${id}-body`}>{props.children}</div>
        <div class="actions">
          <button type="button" class="secondary" ref={cancel} onClick={close}>
            Cancel
          </button>
          <button
            type="button"
            class={props.tone === 'primary' ? undefined : 'danger'}
            onClick={() => {
              close();
              props.onConfirm();
            }}
          >
            {props.label}
          </button>
        </div>
      </dialog>
    </>
  );
}
