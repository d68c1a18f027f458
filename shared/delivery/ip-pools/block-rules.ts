// The IP watchdog's block rules (config/ip-watchdog.yaml): whether an SMTP reply says the sending address itself is blocked, and which rule says so.
import type { IpWatchdogConfig } from '../../config/index.js';

/** An SMTP reply as the delivery saw it; `enhanced` is its RFC 3463 code when it had one (5.7.606). */
export interface ReplySeen {
  code: number;
  text: string;
  enhanced: string | null;
}

interface CompiledRule {
  name: string;
  reply: RegExp | undefined;
  enhanced: ((code: string) => boolean) | undefined;
  text: RegExp | undefined;
}

/** 5.7.x matches field by field; 5.7.606-5.7.649 is a range of the detail within one class.subject. */
function enhancedMatcher(pattern: string): (code: string) => boolean {
  const range = /^(\d)\.(\d{1,3})\.(\d{1,3})-\d\.\d{1,3}\.(\d{1,3})$/.exec(pattern);
  if (range) {
    const [, cls, subject, lo, hi] = range.map(Number) as [number, number, number, number, number];
    return (code) => {
      const [c, s, d] = code.split('.').map(Number);
      return c === cls && s === subject && d !== undefined && d >= lo && d <= hi;
    };
  }
  const want = pattern.toLowerCase().split('.');
  return (code) => {
    const have = code.split('.');
    return have.length === 3 && want.every((part, i) => part === 'x' || Number(part) === Number(have[i]));
  };
}

// Compiled once per loaded config, not once per reply.
const compiled = new WeakMap<IpWatchdogConfig, CompiledRule[]>();

function rulesOf(config: IpWatchdogConfig): CompiledRule[] {
  let rules = compiled.get(config);
  if (!rules) {
    rules = config.rules.map((r) => ({
      name: r.name,
      reply: r.reply === undefined ? undefined : new RegExp(`^${r.reply.toLowerCase().replace(/x/g, '\\d')}$`),
      enhanced: r.enhanced === undefined ? undefined : enhancedMatcher(r.enhanced),
      text: r.text === undefined ? undefined : new RegExp(r.text, 'i'),
    }));
    compiled.set(config, rules);
  }
  return rules;
}

/**
 * The name of the first rule every condition of which the reply meets, or null. Only refusals
 * (4xx, 5xx) can be blocks: an accepted message says nothing against the address.
 */
export function blockRuleFor(config: IpWatchdogConfig, reply: ReplySeen): string | null {
  if (reply.code < 400 || reply.code >= 600) return null;
  for (const rule of rulesOf(config)) {
    if (rule.reply && !rule.reply.test(String(reply.code))) continue;
    if (rule.enhanced && (reply.enhanced === null || !rule.enhanced(reply.enhanced))) continue;
    if (rule.text && !rule.text.test(reply.text)) continue;
    return rule.name;
  }
  return null;
}
