// Classifies the outcome of one delivery attempt (a remote SMTP reply, a network or DNS failure, a routing failure) as delivered, temporary or a hard / soft
// bounce.
import type { BounceRulesConfig } from '../config/index.js';

/** What one attempt ended with, before any judgement. */
export type SmtpOutcome =
  /** The remote server answered (2xx accepted; 4xx / 5xx refused). `text` is the whole reply, code included. */
  | { kind: 'reply'; code: number; text: string }
  /** No usable reply: refused or dropped connection, timeout, TLS failure. */
  | { kind: 'network'; text: string }
  /** A DNS look-up that could not answer (timeout, SERVFAIL): the destination is unknown for now. */
  | { kind: 'dns'; text: string }
  /** DNS answered that the domain cannot receive mail (null MX, no MX and no address). */
  | { kind: 'unroutable'; enhanced: string; text: string };

export interface AttemptResult {
  outcome: SmtpOutcome;
  /** The host that gave the outcome ("mx1.example.net [192.0.2.1]"), null when none was reached. */
  remoteHost: string | null;
}

export type Verdict = { result: 'delivered' } | { result: 'temporary' } | { result: 'bounce'; subtype: 'hard' | 'soft' };

export interface Classification {
  verdict: Verdict;
  /** The basic reply code, when a server replied. */
  smtpCode: number | null;
  /** The RFC 3463 enhanced status code (5.1.1), when one was given. */
  enhancedCode: string | null;
  /** What people read: the remote reply, or why there was none. */
  reply: string;
}

// An enhanced code right after the basic code (and its '-' or ' '), at the start of the text or of any reply line.
const ENHANCED = /(?:^|\n)(?:\d{3}[ -])?([245])\.(\d{1,3})\.(\d{1,3})(?=[\s,;:]|$)/;

/** The enhanced status code of a reply, only when its class agrees with the basic code (RFC 3463 §2). */
export function parseEnhancedCode(reply: string, basicCode?: number): string | null {
  const match = ENHANCED.exec(reply.trim());
  if (!match) return null;
  const [, cls, subject, detail] = match;
  if (basicCode !== undefined && String(Math.floor(basicCode / 100)) !== cls) return null;
  return `${cls}.${Number(subject)}.${Number(detail)}`;
}

/** Whether `code` (5.1.10) fits `pattern` (5.1.x): field by field, so 5.1.1 never matches 5.1.10. */
export function codeMatches(pattern: string, code: string): boolean {
  const want = pattern.toLowerCase().split('.');
  const have = code.split('.');
  return want.length === have.length && want.every((part, i) => part === 'x' || Number(part) === Number(have[i]));
}

interface CompiledRule {
  code: string | undefined;
  text: RegExp | undefined;
  class: 'hard' | 'soft';
}

// Rules are compiled once per loaded config, not once per bounce.
const compiled = new WeakMap<BounceRulesConfig, CompiledRule[]>();

function rulesOf(config: BounceRulesConfig): CompiledRule[] {
  let rules = compiled.get(config);
  if (!rules) {
    rules = config.rules.map((r) => ({ code: r.code, text: r.text === undefined ? undefined : new RegExp(r.text, 'i'), class: r.class }));
    compiled.set(config, rules);
  }
  return rules;
}

/**
 * Hard or soft for a permanent (5xx) reply: the first rule whose code pattern and / or text
 * expression both match decides; a rule with a code pattern never matches a reply without an
 * enhanced code. No match: `default`.
 */
export function bounceClass(config: BounceRulesConfig, reply: string, enhancedCode: string | null): 'hard' | 'soft' {
  for (const rule of rulesOf(config)) {
    if (rule.code !== undefined && (enhancedCode === null || !codeMatches(rule.code, enhancedCode))) continue;
    if (rule.text !== undefined && !rule.text.test(reply)) continue;
    return rule.class;
  }
  return config.default;
}

/** The verdict on one attempt's outcome. Everything that is not a definite refusal is temporary: retrying is the safe side. */
export function classify(config: BounceRulesConfig, outcome: SmtpOutcome): Classification {
  switch (outcome.kind) {
    case 'network':
    case 'dns':
      return { verdict: { result: 'temporary' }, smtpCode: null, enhancedCode: null, reply: outcome.text };
    case 'unroutable':
      return {
        verdict: { result: 'bounce', subtype: bounceClass(config, outcome.text, outcome.enhanced) },
        smtpCode: null,
        enhancedCode: outcome.enhanced,
        reply: outcome.text,
      };
    case 'reply': {
      const enhancedCode = parseEnhancedCode(outcome.text, outcome.code);
      const base = { smtpCode: outcome.code, enhancedCode, reply: outcome.text };
      if (outcome.code >= 200 && outcome.code < 300) return { ...base, verdict: { result: 'delivered' } };
      if (outcome.code >= 500 && outcome.code < 600) {
        return { ...base, verdict: { result: 'bounce', subtype: bounceClass(config, outcome.text, enhancedCode) } };
      }
      // 4xx, and anything a conforming server would not send here (1xx, 3xx): try again later.
      return { ...base, verdict: { result: 'temporary' } };
    }
  }
}
