// SMTP replies both servers give (MX and submission): the error smtp-server turns into a reply, and the texts they share.

/** An error smtp-server turns into a reply: `responseCode` is the code, the message the text. */
export interface SmtpError extends Error {
  responseCode: number;
}

/** A reply: code, enhanced status code (RFC 3463) and text. */
export interface SmtpReply {
  code: number;
  enhanced: string;
  text: string;
}

/**
 * A reply with its enhanced status code written into the text: smtp-server derives enhanced codes
 * from the reply code alone (550 would always read 5.1.1), so its derivation stays off and every
 * reply of ours names the precise one.
 */
export function smtpError(code: number, enhanced: string, text: string): SmtpError {
  return Object.assign(new Error(`${enhanced} ${text}`), { responseCode: code });
}

export function isSmtpError(err: unknown): err is SmtpError {
  return err instanceof Error && typeof (err as Partial<SmtpError>).responseCode === 'number';
}

export const errorOf = (reply: SmtpReply): SmtpError => smtpError(reply.code, reply.enhanced, reply.text);

/** Our failure (a handler that threw, a store that failed): the client retries later. */
export const LOCAL_ERROR: SmtpReply = Object.freeze({ code: 451, enhanced: '4.3.0', text: 'local error in processing: try again later' });
/** The client went away (or the stream broke) before the end of DATA: nothing was stored. */
export const NOT_RECEIVED_IN_FULL: SmtpReply = Object.freeze({ code: 451, enhanced: '4.3.0', text: 'the message was not received in full' });
export const SHUTTING_DOWN: SmtpReply = Object.freeze({ code: 421, enhanced: '4.3.2', text: 'service shutting down, try again later' });

export const temporaryFailure = () => errorOf(LOCAL_ERROR);
export const notReceivedInFull = () => errorOf(NOT_RECEIVED_IN_FULL);
export const shuttingDown = () => errorOf(SHUTTING_DOWN);
export const messageTooBig = (max: number) => smtpError(552, '5.3.4', `message exceeds the fixed maximum message size of ${max} bytes`);
