// A goal's URL match rule (exact, prefix or a regex checked for safety) and its revenue: what a click converts and is worth.
import safeRegex from 'safe-regex2';
import { validationError } from '../errors.js';

export const MATCH_TYPES = ['exact', 'prefix', 'regex'] as const;
export type MatchType = (typeof MATCH_TYPES)[number];

/** The longest match value (a URL or a pattern). */
export const MAX_MATCH_VALUE = 2048;
/** The longest regex pattern: short patterns keep the backtracking analysis meaningful. */
export const MAX_PATTERN = 200;
/** At most this many unbounded quantifiers (*, +, {n,}): k of them in a row cost O(n^k) on a failing URL. */
export const MAX_UNBOUNDED_QUANTIFIERS = 2;
/** URLs longer than this never match a regex goal (bounds the work one click can cost). */
export const MAX_MATCHED_URL = 2048;
/** The revenue query parameter's value: an amount in major units with at most two decimals (49.99, 50). */
const AMOUNT = /^\d{1,10}(?:\.\d{1,2})?$/;

export interface GoalRule {
  match_type: MatchType;
  match_value: string;
  revenue_cents: number | null;
  revenue_param: string | null;
}

/**
 * Refuses a regex that could stall the click path: too long, not compilable, with backreferences (matching them
 * is NP-hard), nested or repeated-alternation quantifiers (catastrophic backtracking, checked by safe-regex2 and
 * below), or more than MAX_UNBOUNDED_QUANTIFIERS unbounded quantifiers (polynomial backtracking).
 */
export function checkPattern(pattern: string): RegExp {
  const field = 'match_value';
  if (pattern.length > MAX_PATTERN) throw validationError(field, `a regex must be at most ${MAX_PATTERN} characters`);
  let re: RegExp;
  try {
    re = new RegExp(pattern);
  } catch (err) {
    throw validationError(field, `not a valid regular expression: ${(err as Error).message}`);
  }
  const shape = scanPattern(pattern);
  if (shape.backreference) throw validationError(field, 'backreferences are not allowed in a goal regex');
  if (shape.repeatedAlternation || !safeRegex(re)) {
    throw validationError(field, 'the regex could backtrack catastrophically (a quantifier over a repeated or alternating group); simplify it');
  }
  if (shape.unbounded > MAX_UNBOUNDED_QUANTIFIERS) {
    throw validationError(field, `at most ${MAX_UNBOUNDED_QUANTIFIERS} unbounded quantifiers (*, +, {n,}) are allowed in a goal regex`);
  }
  return re;
}

interface PatternShape {
  backreference: boolean;
  /** A group holding a top-level | with an unbounded quantifier after it, e.g. (a|ab)+. */
  repeatedAlternation: boolean;
  unbounded: number;
}

/** A small scan of the pattern's syntax (escapes, classes, groups) for the shapes safe-regex2 does not judge. */
function scanPattern(p: string): PatternShape {
  const shape: PatternShape = { backreference: false, repeatedAlternation: false, unbounded: 0 };
  const groups: boolean[] = []; // per open group: holds a top-level |
  let closedAlternation = false;
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    const afterGroup = closedAlternation;
    closedAlternation = false;
    if (c === '\\') {
      const next = p[i + 1] ?? '';
      if (/[1-9]/.test(next) || (next === 'k' && p[i + 2] === '<')) shape.backreference = true;
      i++;
      continue;
    }
    if (c === '[') {
      for (i++; i < p.length && p[i] !== ']'; i++) if (p[i] === '\\') i++;
      continue;
    }
    if (c === '(') groups.push(false);
    else if (c === '|' && groups.length > 0) groups[groups.length - 1] = true;
    else if (c === ')') closedAlternation = groups.pop() ?? false;
    else if (c === '*' || c === '+' || (c === '{' && /^\{\d+,\}/.test(p.slice(i)))) {
      shape.unbounded++;
      if (afterGroup) shape.repeatedAlternation = true;
    }
  }
  return shape;
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

/** Compiled regexes by pattern (patterns were checked when saved); bounded so a busy process does not grow. */
const compiled = new Map<string, RegExp>();
const MAX_COMPILED = 5000;

function regexOf(pattern: string): RegExp {
  let re = compiled.get(pattern);
  if (!re) {
    if (compiled.size >= MAX_COMPILED) compiled.clear();
    re = new RegExp(pattern);
    compiled.set(pattern, re);
  }
  return re;
}

/** Whether a clicked URL satisfies the rule: exact string equality, a string prefix, or a regex search. */
export function matches(rule: Pick<GoalRule, 'match_type' | 'match_value'>, url: string): boolean {
  switch (rule.match_type) {
    case 'exact':
      return url === rule.match_value;
    case 'prefix':
      return url.startsWith(rule.match_value);
    case 'regex':
      return url.length <= MAX_MATCHED_URL && regexOf(rule.match_value).test(url);
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
