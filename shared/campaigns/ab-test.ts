// The statistics of an A/B test, pure: a two-proportion z-test on the chosen metric, the sample size a difference of the observed size needs, and the
// plain-words recommendation built from them.

/** Two-sided 95 % confidence: |z| at or above this is significant. */
export const Z_95 = 1.959963984540054;
/** One-sided z of 80 % power (the chance of seeing a real difference of the observed size). */
export const Z_POWER_80 = 0.8416212335729143;

/** One variant's exposures (delivered messages) and successes (recipients who opened, or clicked). */
export interface Arm {
  n: number;
  x: number;
}

export interface ZTest {
  p_a: number;
  p_b: number;
  /** (p_a - p_b) / pooled standard error; 0 when it cannot be computed (no sends, or all or none succeeded). */
  z: number;
  /** Two-sided p-value. */
  p_value: number;
  significant: boolean;
}

/**
 * Complementary error function, after W. J. Cody's rational Chebyshev approximation as given in Numerical
 * Recipes (erfcc): fractional error below 1.2e-7 everywhere, plenty for p-values shown to four places.
 */
export function erfc(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const r =
    t *
    Math.exp(
      -z * z -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return x >= 0 ? r : 2 - r;
}

/** Standard normal CDF. */
export const normalCdf = (z: number): number => 0.5 * erfc(-z / Math.SQRT2);

/**
 * Two-proportion z-test with the pooled proportion: p = (x_a + x_b) / (n_a + n_b),
 * SE = sqrt(p (1 - p) (1/n_a + 1/n_b)), z = (p_a - p_b) / SE, p-value = 2 (1 - Φ(|z|)); significant at 95 % iff
 * |z| ≥ 1.96. Without sends in both arms, or with a pooled proportion of 0 or 1 (no variance), z is 0 and nothing
 * is significant.
 */
export function twoProportionZTest(a: Arm, b: Arm): ZTest {
  const p_a = a.n > 0 ? a.x / a.n : 0;
  const p_b = b.n > 0 ? b.x / b.n : 0;
  if (a.n <= 0 || b.n <= 0) return { p_a, p_b, z: 0, p_value: 1, significant: false };
  const pooled = (a.x + b.x) / (a.n + b.n);
  const se = Math.sqrt(pooled * (1 - pooled) * (1 / a.n + 1 / b.n));
  if (!(se > 0)) return { p_a, p_b, z: 0, p_value: 1, significant: false };
  const z = (p_a - p_b) / se;
  const p_value = Math.min(1, 2 * (1 - normalCdf(Math.abs(z))));
  return { p_a, p_b, z, p_value, significant: Math.abs(z) >= Z_95 };
}

/**
 * Sends per variant needed to detect a difference between proportions p_a and p_b (two-sided α = 0.05, power 80 %),
 * the standard formula for two independent proportions (Fleiss; equal arms):
 *
 *   n = ( z_{α/2} · sqrt(2 p̄ (1 − p̄)) + z_β · sqrt(p_a (1 − p_a) + p_b (1 − p_b)) )² / (p_a − p_b)²,  p̄ = (p_a + p_b) / 2
 *
 * with z_{α/2} = 1.95996 and z_β = 0.84162, rounded up. Infinity when the proportions are equal (no sample shows a
 * difference that is not there).
 */
export function sampleSizePerVariant(p_a: number, p_b: number): number {
  const diff = Math.abs(p_a - p_b);
  if (diff === 0) return Infinity;
  const mean = (p_a + p_b) / 2;
  const root = Z_95 * Math.sqrt(2 * mean * (1 - mean)) + Z_POWER_80 * Math.sqrt(p_a * (1 - p_a) + p_b * (1 - p_b));
  return Math.ceil((root * root) / (diff * diff));
}

export type Metric = 'open' | 'click';

export interface Significance {
  metric: Metric;
  z: number;
  p_value: number;
  significant: boolean;
  /** 'a' or 'b', the variant with the higher rate; null when they are equal. */
  leader: 'a' | 'b' | null;
  /** Sends per variant a difference of the observed size needs (null: no difference observed, or no data). */
  needed_per_variant: number | null;
  /** How many more sends each variant needs beyond those it has (0 once significant or reached). */
  more_per_variant: number | null;
  recommendation: string;
}

const pct = (p: number) => `${(p * 100).toFixed(1)} %`;
const count = (n: number) => n.toLocaleString('en-US');

/** The test on `metric` and what it means, in one sentence or two. */
export function judge(metric: Metric, a: Arm, b: Arm): Significance {
  const what = metric === 'open' ? 'open rate' : 'click rate';
  const test = twoProportionZTest(a, b);
  const leader: 'a' | 'b' | null = test.p_a > test.p_b ? 'a' : test.p_b > test.p_a ? 'b' : null;
  const base = { metric, z: round(test.z, 4), p_value: round(test.p_value, 4), significant: test.significant, leader };
  if (a.n <= 0 || b.n <= 0) {
    return {
      ...base,
      needed_per_variant: null,
      more_per_variant: null,
      recommendation: `No result yet: both variants need delivered messages before their ${what}s can be compared.`,
    };
  }
  if (test.significant) {
    const [hi, lo] = leader === 'a' ? [test.p_a, test.p_b] : [test.p_b, test.p_a];
    return {
      ...base,
      needed_per_variant: null,
      more_per_variant: 0,
      recommendation:
        `Variant ${leader} wins: its ${what} (${pct(hi)}) is higher than variant ${leader === 'a' ? 'b' : 'a'}'s (${pct(lo)}), ` +
        `and the difference is statistically significant at 95 % confidence (z = ${test.z.toFixed(2)}, p = ${test.p_value.toFixed(4)}). Finalize ` +
        `with winner "${leader}".`,
    };
  }
  const needed = sampleSizePerVariant(test.p_a, test.p_b);
  if (!Number.isFinite(needed)) {
    return {
      ...base,
      needed_per_variant: null,
      more_per_variant: null,
      recommendation: `Not significant: both variants have the same ${what} (${pct(test.p_a)}), so more sends will not separate them; either subject will do.`,
    };
  }
  const more = Math.max(0, needed - Math.min(a.n, b.n));
  const tail =
    more > 0
      ? `To confirm a difference of this size (80 % power) each variant needs about ${count(needed)} delivered messages: about ${count(more)} more per variant.`
      : `Each variant already has the ${count(needed)} delivered messages a difference of this size usually needs; ` +
        'the difference is likely smaller than it looks, or absent.';
  return {
    ...base,
    needed_per_variant: needed,
    more_per_variant: more,
    recommendation:
      `Not yet significant: variant ${leader}'s ${what} (${pct(Math.max(test.p_a, test.p_b))} against ${pct(Math.min(test.p_a, test.p_b))}) ` +
      `could still be chance at 95 % confidence (z = ${test.z.toFixed(2)}, p = ${test.p_value.toFixed(4)}). ${tail}`,
  };
}

function round(value: number, places: number): number {
  const f = 10 ** places;
  return Math.round(value * f) / f;
}
