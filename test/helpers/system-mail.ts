// Platform e-mails written to the outbox when no sender is set up: the log names the file, the file holds the message.
import { readFileSync } from 'node:fs';

/** The whole message (headers and text) of a `system_mail` log entry, read from the outbox file it names. */
export function systemMailText(entry: { system_mail?: { file?: string } } | undefined): string {
  const file = entry?.system_mail?.file;
  return file ? readFileSync(file, 'utf8') : '';
}
