// The replies both SMTP servers (MX and submission) owe RFC 5321, 3463, 3207 and 6531 where smtp-server's own fall short: an enhanced status code on every
// reply, EXPN 502, VRFY 252, AUTH before TLS 530 and a non-ASCII address without SMTPUTF8 553.
import type { SMTPServer, SMTPServerOptions } from 'smtp-server';
import type { SMTPConnection } from 'smtp-server/lib/smtp-connection.js';
import { smtpError, type SmtpError } from './replies.js';

/**
 * Options both servers pass to smtp-server. With ENHANCEDSTATUSCODES advertised (RFC 2034) the
 * library puts a code derived from the reply code on each of its own replies (none on the greeting,
 * EHLO/HELO and 3xx, as RFC 2034 §3 says); ours name theirs in the text (smtpError). The sendmail
 * jokes WIZ, SHELL and KILL (a 200 "Please pass, oh mighty wizard") are no SMTP: unrecognized here.
 */
export const PROTOCOL_OPTIONS = { hideENHANCEDSTATUSCODES: false } as const satisfies SMTPServerOptions;
export const NOT_SMTP_COMMANDS: readonly string[] = Object.freeze(['WIZ', 'SHELL', 'KILL']);

export interface ProtocolOptions {
  /**
   * Submission's STARTTLS port: AUTH is disabled until TLS is up (not offered in EHLO, RFC 4954 §4)
   * and asked for then with 530 5.7.0 (RFC 3207 §4). Otherwise a disabled AUTH (the MX) is 502 5.5.1.
   */
  authNeedsTls: boolean;
}

/** A reply text that already starts with an enhanced status code (RFC 3463: class.subject.detail). */
const ENHANCED_CODE = /^[245]\.\d{1,3}\.\d{1,3}(?=\s|$)/;
/** MAIL FROM / RCPT TO with a bracketed path: the path, and what follows it (the parameters). */
const ADDRESS_COMMAND = /^\s*(?:MAIL\s+FROM|RCPT\s+TO)\s*:\s*(<[^<>]*>)(.*)$/is;
const NON_ASCII = /[^\x00-\x7f]/;
const SMTPUTF8_PARAMETER = /(?:^|\s)SMTPUTF8(?=\s|$)/i;

export const mustStartTls = () => smtpError(530, '5.7.0', 'Must issue a STARTTLS command first');
export const authNotOffered = () => smtpError(502, '5.5.1', 'AUTH is not available here');
export const expnNotSupported = () => smtpError(502, '5.5.1', 'EXPN is not supported');
export const vrfySyntax = () => smtpError(501, '5.5.4', 'Syntax: VRFY address');
/** RFC 5321 §3.5.3 and §7.3: an address is never verified (it would tell a harvester which exist), and 252 neither confirms nor denies. */
export const cannotVrfy = () => smtpError(252, '2.0.0', 'Cannot VRFY the address, but mail to it will be taken and delivery attempted');
export const nonAsciiAddress = () => smtpError(553, '5.6.7', 'non-ASCII address without the SMTPUTF8 parameter (RFC 6531)');

/**
 * Instruments every connection of `server` as the library creates it (before its init(), as
 * attachConnectionHooks does). These replace or wrap parts of smtp-server's connection below its
 * public API; test/scenarios/libraries/smtp-server-internals.test.ts pins each against the pinned release.
 */
export function attachProtocolReplies(server: SMTPServer, options: ProtocolOptions): void {
  const connections = server.connections as Set<SMTPConnection>;
  const add = connections.add.bind(connections);
  connections.add = (connection: SMTPConnection) => {
    instrument(connection, options);
    return add(connection);
  };
}

/** smtp-server dispatches a command to the connection's `handler_<NAME>`, its own property before the prototype's. */
type Handler = (line: Buffer, callback: () => void) => void;

function instrument(connection: SMTPConnection & { handler_EXPN?: Handler }, options: ProtocolOptions): void {
  const send = connection.send.bind(connection);
  const reply = (err: SmtpError) => send(err.responseCode, err.message, false);
  // Every reply goes out here (the library's single write site). One whose text names its enhanced
  // code is sent as it is: the library's code, derived from the reply code alone (550 always 5.1.1),
  // would stand before ours.
  connection.send = (code, data, context) => {
    // The library's reply to a command it does not offer in this session, given with the command's name.
    if (code === 500 && context === 'AUTH') return reply(options.authNeedsTls && !connection.secure ? mustStartTls() : authNotOffered());
    return send(code, data, typeof data === 'string' && ENHANCED_CODE.test(data) ? false : context);
  };

  // The library has no EXPN (a 500 as for a typo), and its VRFY answers 252 with 2.1.5, "destination address valid".
  connection.handler_EXPN = (_line, callback) => {
    reply(expnNotSupported());
    callback();
  };
  connection.handler_VRFY = (line, callback) => {
    reply(line.toString().trim().split(/\s+/).length < 2 ? vrfySyntax() : cannotVrfy());
    callback();
  };

  // RFC 6531: without SMTPUTF8 on the MAIL of the transaction, a path must be ASCII. Read from the
  // client's line: the library turns an A-label domain into U-labels before anything else sees it.
  const mail = connection.handler_MAIL.bind(connection);
  connection.handler_MAIL = (line, callback) => {
    const command = ADDRESS_COMMAND.exec(line.toString());
    if (!command || !NON_ASCII.test(command[1]!) || SMTPUTF8_PARAMETER.test(command[2]!)) return mail(line, callback);
    reply(nonAsciiAddress());
    callback();
  };
  const rcpt = connection.handler_RCPT.bind(connection);
  connection.handler_RCPT = (line, callback) => {
    const command = ADDRESS_COMMAND.exec(line.toString());
    // RCPT before an accepted MAIL is the library's to answer (503).
    const from = connection.session.envelope?.mailFrom;
    if (!command || !from || !NON_ASCII.test(command[1]!) || (from.args !== false && from.args['SMTPUTF8'] === true)) return rcpt(line, callback);
    reply(nonAsciiAddress());
    callback();
  };
}
