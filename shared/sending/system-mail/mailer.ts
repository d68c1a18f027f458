// Platform e-mails (password reset, team invites) sent through Mailpath's own outbound path as the super-admin tenant, or written to the data dir's outbox
// when no sender is set up.
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../../config/index.js';
import type { Queryable } from '../../db/connection.js';
import type { Logger } from '../../kernel/log.js';
import { isRefused, type AcceptInput, type AcceptOutcome } from '../accept.js';
import { normalizeEmail } from '../../audiences/suppressions/service.js';
import { findSuperAdminTenant } from '../../accounts/tenants/queries.js';

export interface SystemMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

export interface SystemMailResult {
  /** True when the message was queued (or deferred by warm-up) for delivery. */
  sent: boolean;
  /** The outbound send (GET /sends/{id} as the super-admin), when one was stored. */
  send_id?: string;
}

export interface SystemMailer {
  send(m: SystemMessage): Promise<SystemMailResult>;
}

export interface SystemMailDeps {
  config: Pick<Config, 'systemSender' | 'dataDir'>;
  sql: Queryable;
  log: Logger;
  /** The tenant's domains that may send now. */
  sendingDomains(tenantId: string): Promise<{ id: string; name: string }[]>;
  /** The send use-case (shared/sending/accept.ts's acceptSend with the process's sending deps). */
  send(input: AcceptInput): Promise<AcceptOutcome>;
}

/** The display name of platform e-mails. */
const FROM_NAME = 'Mailpath';

/**
 * Sends as MAILPATH_SYSTEM_SENDER, which must be at a verified sending domain of the super-admin
 * tenant; the message takes the same gates, DKIM signing, queue and delivery as any tenant's.
 * Without a usable sender the message is written to `<data dir>/outbox/` (readable by the owner
 * only) and the log names the file, so an operator can still pass it on while the links, which
 * carry single-use tokens, never reach a log. Never throws: a platform e-mail that cannot go out must not
 * fail the request that asked for it.
 */
export class SystemMail implements SystemMailer {
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(private readonly deps: SystemMailDeps) {}

  async send(m: SystemMessage): Promise<SystemMailResult> {
    const { log } = this.deps;
    try {
      const from = await this.sender();
      if (typeof from === 'string') {
        const file = await this.writeToOutbox(m, from);
        log.info({ system_mail: { to: m.to, subject: m.subject, file }, reason: from }, 'system e-mail not sent; written to the outbox');
        return { sent: false };
      }
      const result = await this.deps.send({
        tenant: from.tenant,
        mode: 'live',
        apiKeyId: null,
        source: 'api',
        from: { address: from.address, name: FROM_NAME },
        to: normalizeEmail(m.to, 'to'),
        content: { kind: 'compose', subject: m.subject, text: m.text, html: m.html },
      });
      if (isRefused(result)) {
        log.warn({ refusal: result.refusal, subject: m.subject }, 'system e-mail refused by the outbound gates');
        return { sent: false };
      }
      const { id, status } = result.send;
      const sent = status === 'queued' || status === 'deferred';
      log.info({ send_id: id, status, subject: m.subject }, sent ? 'system e-mail queued' : 'system e-mail not delivered (suppressed or simulated)');
      return { sent, send_id: id };
    } catch (err) {
      log.error({ err, subject: m.subject }, 'system e-mail failed');
      return { sent: false };
    }
  }

  /** Sends without making the caller wait (or letting its answer time depend on the send). */
  sendLater(m: SystemMessage): void {
    const job = this.send(m).finally(() => this.inFlight.delete(job));
    this.inFlight.add(job);
  }

  /** Waits for every sendLater started so far (shutdown, tests). */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** Writes the message as a small RFC 5322 file (text part only) and returns its path. */
  private async writeToOutbox(m: SystemMessage, reason: string): Promise<string> {
    const dir = join(this.deps.config.dataDir, 'outbox');
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const at = new Date();
    const file = join(dir, `${at.toISOString().replace(/[:.]/g, '-')}-${randomBytes(4).toString('hex')}.eml`);
    const oneLine = (v: string) => v.replace(/[\r\n]+/g, ' ');
    const headers = [`To: ${oneLine(m.to)}`, `Subject: ${oneLine(m.subject)}`, `Date: ${at.toUTCString()}`, `X-Mailpath-Not-Sent: ${oneLine(reason)}`];
    await writeFile(file, `${headers.join('\r\n')}\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n${m.text}\r\n`, { mode: 0o600 });
    return file;
  }

  /** The sender and its tenant, or why there is none (a string). */
  private async sender(): Promise<{ address: string; tenant: { id: string; status: 'active' | 'suspended'; is_sandbox: boolean } } | string> {
    const configured = this.deps.config.systemSender;
    if (!configured) return 'MAILPATH_SYSTEM_SENDER is not set';
    const address = normalizeEmail(configured, 'MAILPATH_SYSTEM_SENDER');
    const tenant = await findSuperAdminTenant(this.deps.sql);
    if (!tenant) return 'there is no super-admin tenant yet';
    const domain = address.slice(address.lastIndexOf('@') + 1);
    const domains = await this.deps.sendingDomains(tenant.id);
    if (!domains.some((d) => d.name === domain)) return `${domain} is not a verified sending domain of the super-admin tenant`;
    return { address, tenant: { id: tenant.id, status: tenant.status, is_sandbox: tenant.is_sandbox } };
  }
}
