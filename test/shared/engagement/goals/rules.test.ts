// Goal match rules: exact, prefix and regex matching on a linear-time engine (JavaScript syntax kept, what RE2 cannot run refused, program size and
// per-click work bounded), and revenue from a query parameter.
import t from 'tap';
import { AppError } from '../../../../shared/kernel/errors.js';
import {
  checkPattern,
  checkRule,
  clickBudget,
  matches,
  MAX_MATCHED_URL,
  MAX_REGEX_WORK_PER_CLICK,
  revenueOf,
} from '../../../../shared/engagement/goals/rules.js';

function refused(t: { ok(v: unknown, m: string): unknown }, pattern: string, why: RegExp): void {
  let err: unknown;
  try {
    checkPattern(pattern);
  } catch (e) {
    err = e;
  }
  t.ok(
    err instanceof AppError && err.slug === 'validation_error' && /match_value/.test(err.message) && why.test(err.message),
    `${pattern} refused: ${String(err)}`,
  );
}

t.test('exact and prefix rules compare the URL as written', async (t) => {
  t.ok(matches({ match_type: 'exact', match_value: 'https://shop.example/thanks' }, 'https://shop.example/thanks'));
  t.notOk(matches({ match_type: 'exact', match_value: 'https://shop.example/thanks' }, 'https://shop.example/thanks?x=1'));
  t.ok(matches({ match_type: 'prefix', match_value: 'https://shop.example/checkout' }, 'https://shop.example/checkout/done?order=7'));
  t.notOk(matches({ match_type: 'prefix', match_value: 'https://shop.example/checkout' }, 'https://blog.example/checkout'));
});

t.test('a regex rule searches the URL; over-long URLs never match', async (t) => {
  const rule = { match_type: 'regex', match_value: '^https://shop\\.example/order/\\d+' } as const;
  checkPattern(rule.match_value);
  t.ok(matches(rule, 'https://shop.example/order/123?x'));
  t.notOk(matches(rule, 'https://shop.example/order/abc'));
  t.notOk(matches({ match_type: 'regex', match_value: 'order' }, `https://shop.example/order?${'a'.repeat(MAX_MATCHED_URL)}`));
});

t.test('what RE2 cannot run, and broken or too large regexes, are refused with validation_error naming match_value', async (t) => {
  refused(t, '(a)\\1', /backreferences/);
  refused(t, '(?<x>a)\\k<x>', /backreferences/);
  refused(t, 'thanks\\z', /plain z in JavaScript/);
  refused(t, '\\p{L}', /plain p in JavaScript/);
  refused(t, 'shop(?=\\.example)', /lookahead/);
  refused(t, '(?<!www\\.)shop', /lookbehind/);
  refused(t, 'a{0,2000}a{0,2000}a{0,2000}b', /repeat counts at most 1000/);
  refused(t, 'a{0,1000}a{0,1000}a{0,1000}b', /too large.*size 6003, at most 250/);
  refused(t, '(.*a){99}', /too large/);
  refused(t, '([a-z', /not a valid regular expression/);
  refused(t, 'a'.repeat(201), /at most 200/);
});

t.test('JavaScript syntax RE2 shares is accepted; what backtracks in JavaScript runs in linear time', async (t) => {
  for (const pattern of [
    '^https://x\\.example/a\\+b\\*c[*+|(]{2}',
    '/(checkout|cart)/done',
    '^https://shop\\.example/.*\\?order=\\d+',
    '(?<page>thanks|done)\\/?$',
    '\\u0073hop',
    'order=\\d+?&',
  ]) {
    t.doesNotThrow(() => checkPattern(pattern), pattern);
  }
  t.ok(matches({ match_type: 'regex', match_value: '(?<page>thanks|done)\\/?$' }, 'https://shop.example/done/'));
  t.ok(matches({ match_type: 'regex', match_value: '\\u0073hop\\.example' }, 'https://shop.example/'));
  t.notOk(matches({ match_type: 'regex', match_value: '^https://x\\.example/$' }, 'https://X.example/'), 'case matters, as in JavaScript without flags');
  // Catastrophic (exponential) and polynomial backtracking in a backtracking engine; one pass here.
  for (const pattern of ['(a+)+$', '^(\\w+\\s?)*$', '(a|ab)+c', '^.*a.*b.*c.*d.*e', 'a{0,40}a{0,40}a{0,40}b']) {
    checkPattern(pattern);
    t.notOk(matches({ match_type: 'regex', match_value: pattern }, `https://x.example/?${'a'.repeat(MAX_MATCHED_URL - 21)}!`), pattern);
  }
});

t.test('a click spends its regex budget: goals past it are not matched, exact and prefix ones still are', async (t) => {
  const big = { match_type: 'regex', match_value: '(.*a){49}' } as const;
  const url = `https://x.example/?${'a'.repeat(MAX_MATCHED_URL - 19)}`;
  const budget = clickBudget();
  t.equal(budget.left, MAX_REGEX_WORK_PER_CLICK);
  t.ok(matches(big, url, budget), 'the first large goal at the longest URL fits the budget');
  t.ok(budget.left < MAX_REGEX_WORK_PER_CLICK / 2, 'and spends most of it');
  t.notOk(matches(big, url, budget), 'a second one does not fit: not run');
  t.notOk(matches({ match_type: 'regex', match_value: 'x' }, url, { left: 0 }), 'a spent budget runs nothing');
  t.ok(matches({ match_type: 'prefix', match_value: 'https://x.example/' }, url, { left: 0 }), 'prefix rules cost no regex work');
  t.ok(matches(big, url), 'each click has a budget of its own');
  // A pattern stored before goal regexes ran on RE2 (refused now) never matches, and costs no run.
  t.notOk(matches({ match_type: 'regex', match_value: '(a)\\1' }, 'https://x.example/aa'));
});

t.test('rules: empty or over-long values and bad revenue parameter names are refused', async (t) => {
  const base = { match_type: 'exact', match_value: 'https://x.example/', revenue_cents: null, revenue_param: null } as const;
  t.throws(() => checkRule({ ...base, match_value: '' }), /match_value/);
  t.throws(() => checkRule({ ...base, match_value: 'x'.repeat(2049) }), /match_value/);
  t.throws(() => checkRule({ ...base, revenue_param: 'a b' }), /revenue_param/);
  t.doesNotThrow(() => checkRule({ ...base, revenue_param: 'order[total]' }));
});

t.test('revenue: a usable query parameter amount in major units, else the fixed revenue, else 0', async (t) => {
  const goal = { revenue_cents: 500, revenue_param: 'value' };
  t.equal(revenueOf(goal, 'https://shop.example/done?value=49.99'), 4999);
  t.equal(revenueOf(goal, 'https://shop.example/done?value=50'), 5000);
  t.equal(revenueOf(goal, 'https://shop.example/done?value=3.5'), 350);
  t.equal(revenueOf(goal, 'https://shop.example/done?value=-3'), 500, 'negative: the fixed revenue');
  t.equal(revenueOf(goal, 'https://shop.example/done?value=1e9'), 500, 'not a plain amount');
  t.equal(revenueOf(goal, 'https://shop.example/done?value=1.999'), 500, 'more than 2 decimals');
  t.equal(revenueOf(goal, 'https://shop.example/done'), 500, 'absent');
  t.equal(revenueOf({ revenue_cents: null, revenue_param: 'value' }, 'https://shop.example/done'), 0);
  t.equal(revenueOf({ revenue_cents: 1200, revenue_param: null }, 'https://shop.example/done?value=9'), 1200);
});
