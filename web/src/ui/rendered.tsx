// A message the API rendered (a template's or a campaign's preview): subject, the HTML in a sandboxed frame (no
// scripts, no requests of its own) beside its source, and the text, each where the tests and readers find it.
import type { ComponentChildren } from 'preact';

export interface RenderedParts {
  subject: string;
  html: string | null;
  text: string | null;
}

export function RenderedMessage(props: { message: RenderedParts; children?: ComponentChildren }) {
  const { message } = props;
  return (
    <div data-testid="preview" aria-live="polite">
      {props.children}
      <p>
        <strong>Subject:</strong> <span data-testid="preview-subject">{message.subject}</span>
      </p>
      {message.html !== null && (
        <>
          <h3>HTML</h3>
          <iframe class="preview-frame" title="The HTML body, rendered" sandbox="" srcdoc={message.html} />
          <details>
            <summary>HTML source</summary>
            <pre data-testid="preview-html">{message.html}</pre>
          </details>
        </>
      )}
      {message.text !== null && (
        <>
          <h3>Text</h3>
          <pre data-testid="preview-text">{message.text}</pre>
        </>
      )}
    </div>
  );
}
