// The DATA phase of a submission: prepare the message, hand it to the send use-case (one send per recipient), choose the one reply.
import { acceptForRecipients, type RecipientsResult } from '../../shared/sending/accept.js';
import type { SendingDeps } from '../../shared/sending/deps.js';
import type { Submitter } from './auth.js';
import { prepareMessage } from './message.js';
import { replyForAppError, replyForRefusal } from './replies.js';
import { smtpError, temporaryFailure } from '../smtp/replies.js';

/** An accepted message: the 250 text, and the sends and Message-ID it is stored under (for the mail log). */
export interface Submitted {
  reply: string;
  sendIds: string[];
  messageId: string;
}

/**
 * Accepts a message for its recipients (normalized, in RCPT order) and returns the 250 text.
 * Throws the SmtpError to reply with when nothing was accepted. Every send is committed before
 * this returns, so the 250 that follows never promises more than is stored.
 */
export async function submitMessage(deps: SendingDeps, submitter: Submitter, recipients: string[], data: Buffer): Promise<Submitted> {
  const message = await prepareMessage(data, {
    hostname: deps.config.hostname,
    now: deps.clock.now(),
    maxSubjectLength: deps.config.limits.send.max_subject_length,
  });
  if (message.sender) await checkSender(deps, submitter.tenant.id, message.sender);
  // Each recipient passes the gates on its own; the accepted ones commit together, so a failure
  // stores none of them (a 451 never makes the client's retry a duplicate). A From the tenant may
  // not use refuses the message whole.
  let result: RecipientsResult;
  try {
    result = await acceptForRecipients(
      deps,
      {
        tenant: submitter.tenant,
        mode: submitter.mode,
        apiKeyId: submitter.keyId,
        source: 'smtp',
        from: message.from,
        content: { kind: 'raw', bytes: message.bytes, subject: message.subject, messageId: message.messageId },
      },
      recipients,
    );
  } catch (err) {
    const reply = replyForAppError(err);
    if (reply && reply.responseCode >= 500) throw reply;
    deps.log.error({ err, messageId: message.messageId, recipients: recipients.length }, 'submission failed; nothing was stored');
    throw reply ?? temporaryFailure();
  }
  // A suppressed recipient is accepted too: a silent drop is an acceptance, never a refusal.
  const accepted = result.accepted;
  const refused = result.refused.map((r) => replyForRefusal(r.refusal));

  if (accepted.length === 0) throw refused[0] ?? smtpError(554, '5.5.0', 'no valid recipients');
  const stored = { sendIds: accepted.map((a) => a.send.id), messageId: message.messageId };
  if (refused.length === 0) return { reply: `2.0.0 Ok: queued as <${message.messageId}>`, ...stored };
  // SMTP has one reply for DATA: with some recipients accepted it must be 250, so the refusals
  // (the quota running out mid-message, typically) are named in its text and in the log.
  deps.log.warn(
    { messageId: message.messageId, accepted: accepted.length, refused: refused.map((r) => `${r.responseCode} ${r.message}`) },
    'submission partly refused',
  );
  const first = refused[0]!;
  const reply = truncate(
    `2.0.0 Ok: queued as <${message.messageId}> for ${accepted.length} of ${recipients.length} recipients; ${refused.length} refused: ${first.responseCode} ` +
      `${first.message}`,
    450,
  );
  return { reply, ...stored };
}

/**
 * A Sender names who actually sent the message (RFC 5322 §3.6.2) and clients show it ("on behalf
 * of"): like the From, it must be at one of the tenant's sending domains. A tenant without any is
 * answered by the From check that follows.
 */
async function checkSender(deps: SendingDeps, tenantId: string, sender: string): Promise<void> {
  const domains = await deps.lookups.sendingDomains(tenantId);
  const name = sender.slice(sender.lastIndexOf('@') + 1);
  if (domains.length > 0 && !domains.some((d) => d.name === name)) {
    throw smtpError(550, '5.7.1', `Sender header: its domain ${name} is not a verified sending domain of this tenant`);
  }
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 3)}...`;
}
