// mailparser, loaded the first time a message is parsed rather than at start-up: with its charset tables and HTML
// tooling it is about a fifth of the code a Mailpath process loads, and most processes (an API-only one, a test
// file) never parse a message.
import type { ParsedMail, SimpleParserOptions } from 'mailparser';

type Mailparser = typeof import('mailparser');
let loading: Promise<Mailparser & { default?: Mailparser }> | undefined;

/** mailparser's simpleParser, imported on first use. */
export async function simpleParser(raw: Buffer | string, options?: SimpleParserOptions): Promise<ParsedMail> {
  loading ??= import('mailparser');
  // A CommonJS package's dynamic import: Node gives its exports by name and as `default`, a bundle's split chunk
  // (the test run's) only as `default`.
  const mailparser = await loading;
  return (mailparser.default ?? mailparser).simpleParser(raw, options);
}
