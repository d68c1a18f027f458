// The trust score formula: each factor's range and thresholds, the weights, the tiers, and the no-data cases.
import t from 'tap';
import { tierOf, trustScore } from '../../../../shared/engagement/reputation/trust-score.js';

const perfect = { delivery_rate: 1, bounce_rate: 0, complaint_rate: 0, engagement_rate: 0.2 };

t.test('a perfect domain scores 100; each factor alone at its worst takes its weight off', async (t) => {
  t.match(trustScore(perfect), { score: 100, tier: 'excellent' });
  t.equal(trustScore({ ...perfect, delivery_rate: 0.8 })!.score, 65, 'delivery at 80 % or below: 0 of 35');
  t.equal(trustScore({ ...perfect, bounce_rate: 0.05 })!.score, 70, 'bounces at 5 %: 0 of 30');
  t.equal(trustScore({ ...perfect, complaint_rate: 0.003 })!.score, 75, 'complaints at 0.3 %: 0 of 25');
  t.equal(trustScore({ ...perfect, engagement_rate: 0 })!.score, 90, 'no engagement: 0 of 10');
  t.equal(trustScore({ ...perfect, engagement_rate: 0.9 })!.score, 100, 'engagement beyond 20 % adds nothing');
});

t.test('factors are linear between their bounds', async (t) => {
  const s = trustScore({ delivery_rate: 0.9, bounce_rate: 0.025, complaint_rate: 0.0015, engagement_rate: 0.1 })!;
  t.same(
    s.factors.map((f) => f.value),
    [0.5, 0.5, 0.5, 0.5],
  );
  t.equal(s.score, 50);
  t.equal(s.tier, 'caution');
});

t.test('no data: no score without sends; with sends but none delivered, complaints count as none and engagement as zero', async (t) => {
  t.equal(trustScore({ delivery_rate: null, bounce_rate: null, complaint_rate: null, engagement_rate: null }), null);
  const s = trustScore({ delivery_rate: 0, bounce_rate: 1, complaint_rate: null, engagement_rate: null })!;
  t.equal(s.score, 25);
  t.equal(s.tier, 'at-risk');
});

t.test('tiers', async (t) => {
  t.same([100, 90, 89, 75, 74, 50, 49, 0].map(tierOf), ['excellent', 'excellent', 'good', 'good', 'caution', 'caution', 'at-risk', 'at-risk']);
});
