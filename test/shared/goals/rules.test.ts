// Goal match rules: exact, prefix and regex matching, the regex safety checks (length, compile, backreferences, catastrophic and polynomial backtracking), and revenue from a query parameter.
import t from 'tap';
import { AppError } from '../../../shared/errors.js';
import { checkPattern, checkRule, matches, MAX_MATCHED_URL, revenueOf } from '../../../shared/goals/rules.js';

function refused(t: { ok(v: unknown, m: string): unknown }, pattern: string, why: RegExp): void {
  let err: unknown;
  try {
    checkPattern(pattern);
  } catch (e) {
    err = e;
  }
  t.ok(err instanceof AppError && err.slug === 'validation_error' && /match_value/.test(err.message) && why.test(err.message), `${pattern} refused: ${String(err)}`);
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

t.test('unsafe or broken regexes are refused with validation_error naming match_value', async (t) => {
  refused(t, '(a+)+$', /backtrack/);
  refused(t, '(\\w+\\s?)*$', /backtrack/);
  refused(t, '(a|ab)+c', /backtrack/);
  refused(t, '(https|http)*x', /backtrack/);
  refused(t, '^.*a.*b.*c', /unbounded quantifiers/);
  refused(t, '(a)\\1', /backreferences/);
  refused(t, '(?<x>a)\\k<x>', /backreferences/);
  refused(t, '([a-z', /not a valid regular expression/);
  refused(t, 'a'.repeat(201), /at most 200/);
  // Escaped and bracketed metacharacters are literals.
  checkPattern('^https://x\\.example/a\\+b\\*c[*+|(]{2}');
  checkPattern('/(checkout|cart)/done');
  checkPattern('^https://shop\\.example/.*\\?order=\\d+');
  t.pass('safe patterns are accepted');
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
