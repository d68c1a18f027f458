// Who may submit and how fast: an API key as the SMTP AUTH password (transactional:send scope), failures throttled per client address, under the API's send
// rate limit.
import type { CredentialResolver } from '../../shared/accounts/auth/credentials.js';
import { lockedFor, recordFailure, submissionAddressKey, type ProtectionDeps } from '../../shared/accounts/auth/login-protection.js';
import type { Clock } from '../../shared/kernel/clock.js';
import type { Config } from '../../shared/config/index.js';
import type { KeyUsageRecorder } from '../../shared/accounts/keys/last-used.js';
import { grants } from '../../shared/accounts/keys/scopes.js';
import type { RateLimiter } from '../../shared/limits/rate-limits/limiter.js';
import { callerBucket, tenantBuckets, windowName } from '../../shared/limits/rate-limits/buckets.js';
import type { TenantLimits } from '../../shared/limits/rate-limits/tenant-limits.js';
import { smtpError, type SmtpError } from '../smtp/replies.js';

/** An authenticated submission session: the key and its tenant, as the outbound gates need them. */
export interface Submitter {
  keyId: string;
  /** live keys send, test keys are recorded and never delivered. */
  mode: 'live' | 'test';
  tenant: { id: string; status: 'active' | 'suspended'; is_sandbox: boolean };
}

export type AuthOutcome = { submitter: Submitter; error?: undefined } | { submitter?: undefined; error: SmtpError };

export class SubmissionAuth {
  constructor(
    private readonly credentials: CredentialResolver,
    private readonly keyUsage: KeyUsageRecorder,
    private readonly clock: Clock,
    /** The sign-in throttle's database and settings (auth.yaml login_protection), shared by every process. */
    private readonly protection: ProtectionDeps,
  ) {}

  /**
   * Checks an AUTH password. Only API keys count: a session JWT is for the dashboard, and the
   * username is ignored (clients insist on sending one, and the key alone names the tenant).
   * While the client address is locked by its failures, the answer is 454 4.7.0 and the key is not
   * looked at, so guessing learns nothing during a lock; each failure counts towards the next lock.
   */
  async check(secret: string, remoteAddress: string | null): Promise<AuthOutcome> {
    const keys = remoteAddress ? [submissionAddressKey(remoteAddress)] : [];
    const locked = await lockedFor(this.protection, keys);
    if (locked !== undefined) {
      return { error: smtpError(454, '4.7.0', `too many failed authentication attempts from this address: retry after ${locked}s`) };
    }
    const outcome = await this.resolve(secret);
    // Counted before the reply: the client's next session, on any process, already sees it.
    if (outcome.error) await recordFailure(this.protection, keys);
    // last_used_at is how the spec's key rotation confirms traffic moved to the new key.
    else this.keyUsage.record(outcome.submitter.keyId, this.clock.now(), remoteAddress);
    return outcome;
  }

  /** The same check without recording use: for a session that re-reads its key (revocation, suspension). */
  async resolve(secret: string): Promise<AuthOutcome> {
    // Built only when needed: an Error captures a stack trace, and every MAIL and DATA re-reads the key.
    const invalid = () => ({ error: smtpError(535, '5.7.8', 'Authentication credentials invalid') });
    if (!this.credentials.isApiKey(secret)) return invalid();
    const principal = await this.credentials.resolve(secret);
    if (!principal || principal.kind !== 'api_key' || !principal.key) return invalid();
    if (!grants(principal.scopes, 'transactional:send')) {
      return { error: smtpError(535, '5.7.8', 'Authentication credentials invalid: the API key lacks the transactional:send scope') };
    }
    return {
      submitter: {
        keyId: principal.key.id,
        mode: principal.key.mode,
        tenant: { id: principal.tenant.id, status: principal.tenant.status, is_sandbox: principal.tenant.is_sandbox },
      },
    };
  }
}

/** The API's send rate limit for SMTP: each recipient counts as one POST /transactional/send. */
export class SubmissionRateLimit {
  constructor(
    private readonly limiter: RateLimiter,
    private readonly tenantLimits: TenantLimits,
    private readonly limits: Config['limits']['rate_limits'],
  ) {}

  /**
   * Counts one recipient; a temporary refusal (451 4.7.1) when a bucket is full, so the client's
   * queue retries after the window. The buckets are the API's (shared/limits/rate-limits/buckets.ts), so a
   * key sending over both HTTP and SMTP draws on one allowance, shared by every process.
   */
  async hit(submitter: Submitter): Promise<SmtpError | undefined> {
    const decision = await this.limiter.hit(
      [
        callerBucket({ kind: 'api_key', id: submitter.keyId }, 'send', this.limits.per_minute),
        ...tenantBuckets(submitter.tenant.id, await this.tenantLimits.get(submitter.tenant.id)),
      ],
      submitter.tenant.id,
    );
    if (decision.allowed) return undefined;
    const { bucket, resetSeconds } = decision.reported;
    return smtpError(451, '4.7.1', `rate limit of ${bucket.limit} messages per ${windowName(bucket)} reached: retry after ${resetSeconds}s`);
  }
}
