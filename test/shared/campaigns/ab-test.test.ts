// The A/B statistics against values computed independently (python3: math.erfc, the same formulas by hand): the two-proportion z-test, its p-value, the
// sample size per variant, and the recommendation's words.
import t from 'tap';
import { erfc, judge, normalCdf, sampleSizePerVariant, twoProportionZTest } from '../../../shared/campaigns/ab-test.js';

const close = (t: { ok(value: unknown, message: string): unknown }, actual: number, expected: number, tolerance: number, what: string) =>
  t.ok(Math.abs(actual - expected) <= tolerance, `${what}: ${actual} ≈ ${expected} (±${tolerance})`);

t.test('erfc and the normal CDF against math.erfc', async (t) => {
  // python3 -c "import math; print(math.erfc(0.5), math.erfc(-1.2), math.erfc(2.5))"
  close(t, erfc(0.5), 0.4795001221869535, 2e-7, 'erfc(0.5)');
  close(t, erfc(-1.2), 1.9103139782296354, 2e-7, 'erfc(-1.2)');
  close(t, erfc(2.5), 0.000406952017444959, 1e-9, 'erfc(2.5)');
  close(t, normalCdf(1.959963984540054), 0.975, 1e-7, 'Φ(1.96)');
  close(t, normalCdf(0), 0.5, 1e-7, 'Φ(0)');
});

t.test('two-proportion z-test against reference values', async (t) => {
  // 20 % vs 15 % of 1000 each: z = 2.9424494316825, p = 0.0032562696284120633 (python3, pooled SE).
  const strong = twoProportionZTest({ n: 1000, x: 200 }, { n: 1000, x: 150 });
  close(t, strong.z, 2.9424494316825, 1e-9, 'z');
  close(t, strong.p_value, 0.0032562696284120633, 1e-6, 'p');
  t.equal(strong.significant, true);

  // 12 % vs 10 %: z = 1.4293008498232314, p = 0.1529177818639462: not significant.
  const weak = twoProportionZTest({ n: 1000, x: 120 }, { n: 1000, x: 100 });
  close(t, weak.z, 1.4293008498232314, 1e-9, 'z');
  close(t, weak.p_value, 0.1529177818639462, 1e-6, 'p');
  t.equal(weak.significant, false);

  // b ahead: the sign flips, the p-value does not. 20 % vs 30 % of 100: z = -1.6329931618554518, p = 0.1024704348597495.
  const negative = twoProportionZTest({ n: 100, x: 20 }, { n: 100, x: 30 });
  close(t, negative.z, -1.6329931618554518, 1e-9, 'z');
  close(t, negative.p_value, 0.1024704348597495, 1e-6, 'p');

  t.same(twoProportionZTest({ n: 0, x: 0 }, { n: 10, x: 3 }), { p_a: 0, p_b: 0.3, z: 0, p_value: 1, significant: false }, 'no sends in an arm');
  t.equal(twoProportionZTest({ n: 10, x: 0 }, { n: 10, x: 0 }).z, 0, 'no variance: nothing to test');
});

t.test('sample size per variant (α 0.05 two-sided, 80 % power)', async (t) => {
  // python3: ((1.959964*sqrt(2*m*(1-m)) + 0.841621*sqrt(pa*(1-pa)+pb*(1-pb)))**2 / (pa-pb)**2, rounded up.
  t.equal(sampleSizePerVariant(0.12, 0.1), 3841, '12 % vs 10 %: 3840.85');
  t.equal(sampleSizePerVariant(0.2, 0.15), 906, '20 % vs 15 %: 905.37');
  t.equal(sampleSizePerVariant(0.3, 0.2), 294, '30 % vs 20 %: 293.15');
  t.equal(sampleSizePerVariant(0.1, 0.12), 3841, 'symmetric');
  t.equal(sampleSizePerVariant(0.1, 0.1), Infinity, 'no difference: no sample size');
});

t.test('the recommendation says plainly what the test means', async (t) => {
  const won = judge('open', { n: 1000, x: 200 }, { n: 1000, x: 150 });
  t.match(won, { significant: true, leader: 'a', more_per_variant: 0, z: 2.9424, p_value: 0.0033 });
  t.match(
    won.recommendation,
    /^Variant a wins: its open rate \(20\.0 %\) is higher than variant b's \(15\.0 %\), and the difference is statistically significant at 95 % confidence/,
  );

  const open = judge('click', { n: 1000, x: 100 }, { n: 1000, x: 120 });
  t.match(open, { significant: false, leader: 'b', needed_per_variant: 3841, more_per_variant: 2841 });
  t.match(open.recommendation, /^Not yet significant: variant b's click rate \(12\.0 % against 10\.0 %\) could still be chance at 95 % confidence/);
  t.match(open.recommendation, /about 3,841 delivered messages: about 2,841 more per variant\./);

  const tie = judge('open', { n: 500, x: 50 }, { n: 500, x: 50 });
  t.match(tie, { significant: false, leader: null, needed_per_variant: null });
  t.match(tie.recommendation, /same open rate \(10\.0 %\)/);

  t.match(judge('open', { n: 0, x: 0 }, { n: 0, x: 0 }).recommendation, /^No result yet/);
});
