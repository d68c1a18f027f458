// A secret or a DNS record shown with a button that copies it; says so for screen readers when it has.
import { useState } from 'preact/hooks';

/**
 * `what` names what is copied ("the DKIM value"): the button is "Copy the DKIM value", then "Copied the DKIM value"
 * for two seconds, so its accessible name always holds the word it shows (WCAG 2.5.3, label in name).
 */
export function CopyButton(props: { text: string; what: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.text);
      setCopied(true);
      setTimeout(() => setCopied(false), 2000);
    } catch {
      setCopied(false);
    }
  };
  return (
    <>
      <button type="button" class="secondary" onClick={copy} aria-label={`${copied ? 'Copied' : 'Copy'} ${props.what}`}>
        {copied ? 'Copied' : 'Copy'}
      </button>
      <span class="visually-hidden" aria-live="polite">
        {copied ? 'Copied to the clipboard' : ''}
      </span>
    </>
  );
}

/** A value the API shows once (a key, a webhook secret): read it, copy it, it will not be shown again. */
export function SecretOnce(props: { value: string; label: string }) {
  return (
    <div class="secret">
      <code data-testid="secret">{props.value}</code>
      <CopyButton text={props.value} what={props.label} />
    </div>
  );
}
