// A Liquid source field: a textarea whose syntax error, as the API names it ("body_html: Liquid syntax error at line 2,
// column 3: …"), is shown under it with its line and column, and a button that puts the caret there.
import { useRef, useState } from 'preact/hooks';

export interface LiquidError {
  part: string;
  line: number;
  column: number;
  reason: string;
}

const LIQUID_ERROR = /^([a-z_]+): Liquid syntax error at line (\d+), column (\d+): (.*)$/s;

/** The part, line, column and reason of an API refusal that names a Liquid syntax error; undefined for any other. */
export function liquidError(message: string): LiquidError | undefined {
  const m = LIQUID_ERROR.exec(message);
  return m ? { part: m[1]!, line: Number(m[2]), column: Number(m[3]), reason: m[4]! } : undefined;
}

/** The offset in `text` of a 1-based line and column (clamped to the text). */
export function offsetOf(text: string, line: number, column: number): number {
  let offset = 0;
  for (let l = 1; l < line; l++) {
    const next = text.indexOf('\n', offset);
    if (next < 0) return text.length;
    offset = next + 1;
  }
  const end = text.indexOf('\n', offset);
  return Math.min(offset + Math.max(0, column - 1), end < 0 ? text.length : end);
}

let nextId = 0;

export function LiquidField(props: {
  label: string;
  name: string;
  value: string;
  onInput: (value: string) => void;
  rows?: number;
  hint?: string;
  error?: LiquidError | undefined;
  /** Another refusal naming this field (not a syntax error). */
  message?: string | undefined;
}) {
  const [id] = useState(() => `liquid-${props.name}-${++nextId}`);
  const area = useRef<HTMLTextAreaElement>(null);
  const { error } = props;
  const goTo = () => {
    const el = area.current;
    if (!el || !error) return;
    const at = offsetOf(el.value, error.line, error.column);
    el.focus();
    el.setSelectionRange(at, at);
  };
  const described = [props.hint ? `${id}-hint` : '', error || props.message ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <textarea
        ref={area}
        id={id}
        name={props.name}
        rows={props.rows ?? 8}
        class="mono"
        spellcheck={false}
        value={props.value}
        onInput={(e) => props.onInput((e.currentTarget as HTMLTextAreaElement).value)}
        aria-invalid={error || props.message ? 'true' : undefined}
        aria-describedby={described}
      />
      {props.hint && (
        <p class="hint" id={`${id}-hint`}>
          {props.hint}
        </p>
      )}
      {error && (
        <p class="field-error" id={`${id}-error`} data-testid={`${props.name}-error`}>
          Line {error.line}, column {error.column}: {error.reason}{' '}
          <button type="button" class="link" onClick={goTo}>
            Go to line {error.line}
          </button>
        </p>
      )}
      {!error && props.message && (
        <p class="field-error" id={`${id}-error`}>
          {props.message}
        </p>
      )}
    </div>
  );
}
