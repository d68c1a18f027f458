// The port the bounce-mailbox rules (the poller, verify) reach a mailbox through: open a logged-in session, list, fetch, delete, quit. The POP3 client
// behind it is in jobs/bounce-mailboxes/; the entry point wires it (main/services.ts).
import type { BounceMailboxesConfig } from '../../config/bounce-mailboxes.js';
import type { BounceMailboxRow } from './queries.js';

/** A refusal or failure of the mailbox's server or the connection, with a message fit for last_poll_error and verify's error. */
export class Pop3Error extends Error {
  override name = 'Pop3Error';
}

/** The context a mailbox's password is sealed under: a sealed value copied into another row does not open. */
export const passwordContext = (mailboxId: string) => `bounce-mailbox:${mailboxId}`;

export interface MailboxMessage {
  /** The message number in this session (1-based). */
  number: number;
  /** The server's unique id of the message, stable across sessions (RFC 1939 UIDL). */
  uidl: string;
  size: number;
}

/** A logged-in session; every failure of a step is a Pop3Error. */
export interface MailboxSession {
  /** Every message in the maildrop with its UIDL and size, in message-number order. */
  list(): Promise<MailboxMessage[]>;
  /** The message's bytes as stored; bigger than `limit` bytes is a Pop3Error (and ends the session). */
  retrieve(number: number, limit: number): Promise<Buffer>;
  /** Marks the message deleted; the server removes it when the session ends with quit(). */
  delete(number: number): Promise<void>;
  /** Ends the session and commits the deletions; if that fails the connection is closed anyway (and nothing is deleted). Never throws. */
  quit(): Promise<void>;
  /** Closes without committing: nothing is deleted. */
  abort(): void;
}

/** The settings of a mailbox a session is opened with (its password sealed under passwordContext(id)). */
export type MailboxAccount = Pick<BounceMailboxRow, 'id' | 'host' | 'port' | 'username' | 'password_sealed' | 'use_tls_implicit'>;

/** What opening is bounded by: the address policy for the host, the deadline of each step. */
export type MailboxPolicy = Pick<BounceMailboxesConfig, 'allow_private_addresses' | 'timeout_ms'>;

/** Logged in, or a Pop3Error saying why not (a host refused by the address policy is one too: the tenant can fix it). */
export type OpenMailbox = (mailbox: MailboxAccount, policy: MailboxPolicy) => Promise<MailboxSession>;

/** The deps field the poller and the service are given it in. */
export interface MailboxOpener {
  openMailbox: OpenMailbox;
}
