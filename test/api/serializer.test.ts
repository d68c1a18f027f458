// The compiled response serializer: the same JSON as zod's encoding (unknown fields dropped, dates as RFC 3339, nullable and optional fields), and under
// validation a difference or an invalid answer fails loudly.
import t from 'tap';
import { z } from 'zod';
import { responseSerializerCompiler } from '../../api/serializer.js';

const schema = z.object({
  ok: z.literal(true),
  data: z.object({
    id: z.string(),
    count: z.number().int(),
    at: z.iso.datetime(),
    note: z.string().nullable(),
    tags: z.array(z.string()),
    extra: z.string().optional(),
    meta: z.record(z.string(), z.unknown()),
    kind: z.union([z.object({ a: z.number() }), z.object({ b: z.string() })]),
  }),
});
const route = { schema, method: 'GET', url: '/x', httpStatus: '200' };
const value = {
  ok: true,
  data: { id: 'a1', count: 3, at: '2026-03-01T10:00:00.000Z', note: null, tags: ['x', 'y'], meta: { n: 1, s: 'é"\n' }, kind: { b: 'q' }, secret: 'dropped' },
};

t.test('compiled and zod answers are the same JSON', async (t) => {
  const fast = responseSerializerCompiler({ validate: false })(route as never) as (d: unknown) => string;
  const checked = responseSerializerCompiler({ validate: true })(route as never) as (d: unknown) => string;
  const expected = {
    ok: true,
    data: { id: 'a1', count: 3, at: '2026-03-01T10:00:00.000Z', note: null, tags: ['x', 'y'], meta: { n: 1, s: 'é"\n' }, kind: { b: 'q' } },
  };
  t.same(JSON.parse(fast(value)), expected, 'unknown fields dropped, as zod does');
  t.same(JSON.parse(checked(value)), expected);
});

t.test('under validation an invalid answer throws instead of going out', async (t) => {
  const checked = responseSerializerCompiler({ validate: true })(route as never) as (d: unknown) => string;
  t.throws(() => checked({ ...value, data: { ...value.data, count: 'three' } }));
});
