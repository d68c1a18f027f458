// A goal's URL match rule (exact, prefix or a regex run by a linear-time engine) and its revenue: what a click converts and is worth.
import { RE2JS } from 're2js';
import { validationError } from '../../kernel/errors.js';

export const MATCH_TYPES = ['exact', 'prefix', 'regex'] as const;
export type MatchType = (typeof MATCH_TYPES)[number];

/** The longest match value (a URL or a pattern). */
export const MAX_MATCH_VALUE = 2048;
/** The longest regex pattern. */
export const MAX_PATTERN = 200;
/**
 * The largest compiled regex (RE2's program size, about one per character matched or repeated: `[a-z]{0,100}` is
 * ~200). Matching is linear in the URL but with the program's size as factor: building the DFA for a new URL, or
 * the NFA it falls back to, costs up to ~75 ns per size × character (measured), so 250 at the longest URL is ~40 ms.
 */
export const MAX_PROGRAM_SIZE = 250;
/** URLs longer than this never match a regex goal (bounds the work one click can cost). */
export const MAX_MATCHED_URL = 2048;
/** Compiling costs about as much as matching this many URL characters (charged to the click that compiles). */
const COMPILE_WEIGHT = 200;
/**
 * The regex work one click may cost, in program size × URL length (an upper bound of the engine's steps), and program size × COMPILE_WEIGHT to compile: one
 * regex goal of the largest size at the longest URL, or ~100 ordinary ones (size ~30 on a ~150-character URL). Goals past
 * it (oldest first) are not matched for that click, so one tenant's click stays a short pause for every other
 * tenant's hits, however many regex goals it has.
 */
export const MAX_REGEX_WORK_PER_CLICK = MAX_PROGRAM_SIZE * (MAX_MATCHED_URL + COMPILE_WEIGHT);
/** The revenue query parameter's value: an amount in major units with at most two decimals (49.99, 50). */
const AMOUNT = /^\d{1,10}(?:\.\d{1,2})?$/;

export interface GoalRule {
  match_type: MatchType;
  match_value: string;
  revenue_cents: number | null;
  revenue_param: string | null;
}

/** A pattern in the JavaScript syntax tenants write, compiled by RE2 (translateRegExp maps \uXXXX, (?<name>…) and the like). */
function compileRe2(pattern: string): RE2JS {
  return RE2JS.compile(RE2JS.translateRegExp(pattern));
}

/**
 * Refuses a regex the linear-time engine cannot run, or runs at too high a cost: too long, not a regex at all, a
 * JavaScript feature RE2 has no linear-time form of (backreferences, lookahead and lookbehind), or too large a
 * program (repeat counts such as {0,1000}). Returns the compiled pattern.
 */
export function checkPattern(pattern: string): RE2JS {
  const field = 'match_value';
  if (pattern.length > MAX_PATTERN) throw validationError(field, `a regex must be at most ${MAX_PATTERN} characters`);
  const divergent = divergentEscape(pattern);
  if (divergent === 'k')
    throw validationError(field, 'backreferences (\\k<name>) are not supported in a goal regex (it runs in linear time); for a plain k drop the backslash');
  if (divergent)
    throw validationError(
      field,
      `\\${divergent} means a plain ${divergent} in JavaScript but something else to the linear-time engine goal regexes run on: drop the backslash`,
    );
  let re: RE2JS;
  try {
    re = compileRe2(pattern);
  } catch (err) {
    const reason = (err as Error).message.replace(/^error parsing regexp: /, '');
    if (isJavaScriptRegex(pattern)) {
      throw validationError(
        field,
        `uses a feature goal regexes do not support (they run in linear time: no backreferences, lookahead or lookbehind, repeat counts at most 1000): ` +
          `${reason}`,
      );
    }
    throw validationError(field, `not a valid regular expression: ${reason}`);
  }
  const size = re.programSize();
  if (size > MAX_PROGRAM_SIZE) {
    throw validationError(
      field,
      `the regex is too large to match on every click (size ${size}, at most ${MAX_PROGRAM_SIZE}): use smaller repeat counts such as {0,20}`,
    );
  }
  return re;
}

/**
 * Escapes that are a plain letter to JavaScript (without the u flag) but an operator to RE2 (\A, \z, \Q…\E, \a,
 * \p{…}) or, in translateRegExp, a plain letter where JavaScript reads a backreference (\k<name>): refused rather than
 * matched otherwise than the tenant meant.
 */
function divergentEscape(pattern: string): string | undefined {
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] !== '\\') continue;
    const next = pattern[++i];
    if (next !== undefined && 'AzQEapPk'.includes(next)) return next;
  }
  return undefined;
}

/** Whether JavaScript compiles the pattern (then RE2's refusal is of a feature, not of a typo). Only at create and update. */
function isJavaScriptRegex(pattern: string): boolean {
  try {
    new RegExp(pattern);
    return true;
  } catch {
    return false;
  }
}

/** Checks a rule for create and update; exact and prefix values are taken literally. */
export function checkRule(rule: GoalRule): void {
  if (rule.match_value.length === 0) throw validationError('match_value', 'must not be empty');
  if (rule.match_value.length > MAX_MATCH_VALUE) throw validationError('match_value', `must be at most ${MAX_MATCH_VALUE} characters`);
  if (rule.match_type === 'regex') checkPattern(rule.match_value);
  if (rule.revenue_param !== null && !/^[A-Za-z0-9_.\-[\]]{1,100}$/.test(rule.revenue_param)) {
    throw validationError('revenue_param', 'must be 1..100 letters, digits or _ . - [ ]');
  }
}

/** The regex work a click has left (MAX_REGEX_WORK_PER_CLICK at first): matches() spends it. */
export interface MatchBudget {
  left: number;
}

export const clickBudget = (): MatchBudget => ({ left: MAX_REGEX_WORK_PER_CLICK });

/**
 * Compiled regexes by pattern; null for a stored pattern RE2 refuses (saved before goal regexes ran on it, or larger
 * than MAX_PROGRAM_SIZE): it never matches. Bounded so a busy process does not grow.
 */
const compiled = new Map<string, RE2JS | null>();
const MAX_COMPILED = 5000;

/** The compiled pattern, compiled on a cache miss at the budget's expense. */
function regexOf(pattern: string, budget: MatchBudget): RE2JS | null {
  let re = compiled.get(pattern);
  if (re === undefined) {
    if (compiled.size >= MAX_COMPILED) compiled.clear();
    try {
      re = compileRe2(pattern);
      budget.left -= re.programSize() * COMPILE_WEIGHT;
      if (pattern.length > MAX_PATTERN || re.programSize() > MAX_PROGRAM_SIZE) re = null;
    } catch {
      budget.left -= MAX_PROGRAM_SIZE * COMPILE_WEIGHT;
      re = null;
    }
    compiled.set(pattern, re);
  }
  return re;
}

/**
 * Whether a clicked URL satisfies the rule: exact string equality, a string prefix, or a regex search. A regex search
 * spends program size × URL length of the budget (and its compiling, on a cache miss); a search that would overspend it
 * is not run (no match), and none runs once it is spent.
 */
export function matches(rule: Pick<GoalRule, 'match_type' | 'match_value'>, url: string, budget: MatchBudget = clickBudget()): boolean {
  switch (rule.match_type) {
    case 'exact':
      return url === rule.match_value;
    case 'prefix':
      return url.startsWith(rule.match_value);
    case 'regex': {
      if (url.length > MAX_MATCHED_URL || budget.left <= 0) return false;
      const re = regexOf(rule.match_value, budget);
      if (!re) return false;
      const cost = re.programSize() * Math.max(url.length, 1);
      if (cost > budget.left) return false;
      budget.left -= cost;
      return re.test(url);
    }
  }
}

/**
 * What one conversion is worth in cents: the revenue parameter's amount when the URL has a usable one
 * (major units, e.g. 49.99 → 4999), else the fixed revenue_cents, else 0.
 */
export function revenueOf(rule: Pick<GoalRule, 'revenue_cents' | 'revenue_param'>, url: string): number {
  if (rule.revenue_param !== null) {
    const value = paramOf(url, rule.revenue_param);
    if (value !== null && AMOUNT.test(value)) {
      const [whole, fraction = ''] = value.split('.');
      return Number(whole) * 100 + Number(fraction.padEnd(2, '0'));
    }
  }
  return rule.revenue_cents ?? 0;
}

function paramOf(url: string, name: string): string | null {
  try {
    return new URL(url).searchParams.get(name);
  } catch {
    return null;
  }
}
