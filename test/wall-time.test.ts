// No test asserts on elapsed wall time: how long something took depends on the machine and what else runs on it, so
// a test asserts which budget fired, or the order of events, and speed figures belong in bench/. Waiting is bounded
// (every loop in a test has a deadline), and a deadline may read the clock: only what an assertion checks is looked at.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import t from 'tap';
import { projectRoot } from '../shared/kernel/paths.js';

const ROOT = projectRoot();

/** Assertions that may check a time, each for its reason (the file, a piece of the assertion's text). */
const ALLOWED: { file: string; assertion: string; why: string }[] = [
  {
    file: 'test/api/routes/password-reset.test.ts',
    assertion: 'performance.now() - started >= MIN_MS',
    why: 'the minimum response time is the feature (no timing difference between known and unknown addresses): a lower bound only',
  },
  {
    file: 'test/api/routes/admin-observability.test.ts',
    assertion: 'sleepy.p99_ms >= 19',
    why: "the query timing's own figure for pg_sleep(0.02): a lower bound the sleep guarantees, checking the unit is milliseconds",
  },
];

/** A read of the wall clock. */
const CLOCK = String.raw`(?:Date\.now\(\)|performance\.now\(\)|process\.hrtime(?:\.bigint)?\([^)]*\))`;
/** What a time taken subtracts: a mark taken before (`start`, `t0`, `started.getTime()`), not an offset (`2 * HOUR`, `ageDays * DAY`). */
const MARK = String.raw`[a-z_$][\w$]*(?:\.[\w$]+)*(?:\(\))?(?![\w$(]|\s*[*/])`;
/** A clock read minus a mark: a time taken. */
const CLOCK_DIFFERENCE = new RegExp(String.raw`${CLOCK}\s*-\s*${MARK}`);
/** A variable or property given a time taken: `const ms = performance.now() - t0`, `{ elapsed: Date.now() - start }`. */
const ELAPSED_BINDING = new RegExp(String.raw`(?:(?:const|let|var)\s+(\w+)\s*=|(\w+)\s*:)\s*[^;,\n]*?${CLOCK}\s*-\s*${MARK}`, 'g');
/** A name that says it holds a duration. */
const DURATION_NAME = /(?:elapsed|took|duration|latency|(?:^|_)ms|[a-z]Ms|_seconds|Seconds)$/;
/** An assertion call: tap's, or node:assert's. */
const ASSERTION = /\b(?:t|tt|st|assert)\.(ok|notOk|equal|not|same|strictSame|match|notMatch|strictEqual|notEqual|deepEqual)\s*\(|\bassert\s*\(/g;
/** How many leading arguments an assertion checks (the rest is its message). */
const CHECKED_ARGUMENTS: Record<string, number> = { ok: 1, notOk: 1, assert: 1 };

/** The text between the parenthesis at `open` and its match, and the top-level arguments in it. */
function argumentsAt(text: string, open: number): string[] {
  const args: string[] = [];
  let depth = 0;
  let start = open + 1;
  for (let i = open; i < text.length; i++) {
    const c = text[i]!;
    if (c === "'" || c === '"' || c === '`') {
      i = endOfString(text, i);
      continue;
    }
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      depth--;
      if (depth === 0) {
        args.push(text.slice(start, i));
        return args.map((a) => a.trim()).filter(Boolean);
      }
    } else if (c === ',' && depth === 1) {
      args.push(text.slice(start, i));
      start = i + 1;
    }
  }
  return args;
}

/** The index of the quote closing the string that opens at `i` (a template's ${…} skipped whole). */
function endOfString(text: string, i: number): number {
  const quote = text[i];
  for (let j = i + 1; j < text.length; j++) {
    if (text[j] === '\\') j++;
    else if (text[j] === quote) return j;
    else if (quote === '`' && text[j] === '$' && text[j + 1] === '{') {
      let depth = 0;
      for (j++; j < text.length; j++) {
        if (text[j] === '{') depth++;
        else if (text[j] === '}' && --depth === 0) break;
      }
    }
  }
  return text.length;
}

/** Operands compared with <, <=, > or >= in an expression (string contents left out). */
function comparisons(expression: string): [string, string][] {
  const code = expression.replace(/(['"`])(?:\\.|(?!\1)[^\\])*\1/g, "''");
  const found: [string, string][] = [];
  for (const m of code.matchAll(/([\w$.!?[\]'()]+)\s*(?:<=?|>=?)\s*(-?[\w$.!?[\]'()]+)/g)) found.push([m[1]!, m[2]!]);
  return found;
}

/** A numeric literal or a constant other than 0, as a time budget is written. */
const BUDGET = /^(?:\d[\d_]*(?:\.\d+)?|[A-Z][A-Z0-9_]*(?:\.[A-Z][A-Z0-9_]*)?)$/;

/** The assertions of a source that check a time taken, as "line: assertion". */
function wallTimeAssertions(source: string): string[] {
  const elapsed = new Set<string>();
  for (const m of source.matchAll(ELAPSED_BINDING)) elapsed.add((m[1] ?? m[2])!);
  // A list collecting times taken: `took.push(performance.now() - t0)`, `times.push(res.ms)`.
  for (const m of source.matchAll(/\b(\w+)\.push\(([^;\n]*)\)/g)) {
    if (CLOCK_DIFFERENCE.test(m[2]!) || [...elapsed].some((name) => new RegExp(String.raw`(?:^|[^\w$])${name}\b`).test(m[2]!))) elapsed.add(m[1]!);
  }
  const found: string[] = [];
  for (const m of source.matchAll(ASSERTION)) {
    const open = m.index + m[0].length - 1;
    const args = argumentsAt(source, open);
    const checked = args.slice(0, CHECKED_ARGUMENTS[m[1] ?? 'assert'] ?? 2);
    const timed = checked.some((arg) => {
      if (CLOCK_DIFFERENCE.test(arg)) return true;
      if ([...elapsed].some((name) => new RegExp(String.raw`(?:^|[^\w$'"])${name}\b`).test(arg.replace(/(['"`])(?:\\.|(?!\1)[^\\])*\1/g, "''")))) return true;
      return comparisons(arg).some(([a, b]) => {
        const name = (side: string) => /([A-Za-z_$][\w$]*)!?$/.exec(side)?.[1] ?? '';
        return (DURATION_NAME.test(name(a)) && BUDGET.test(b) && b !== '0') || (DURATION_NAME.test(name(b)) && BUDGET.test(a) && a !== '0');
      });
    });
    if (timed) {
      const line = source.slice(0, m.index).split('\n').length;
      found.push(`${line}: ${source.slice(m.index, open + 1)}${args.join(', ')})`);
    }
  }
  return found;
}

function testSources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...testSources(path));
    else if (name.endsWith('.ts')) out.push(relative(ROOT, path).split(sep).join('/'));
  }
  return out;
}

const SELF = 'test/wall-time.test.ts';
const findings = testSources(join(ROOT, 'test'))
  .filter((file) => file !== SELF)
  .flatMap((file) => wallTimeAssertions(readFileSync(join(ROOT, file), 'utf8')).map((finding) => ({ file, finding })));

t.test('no test asserts on elapsed wall time (assert the budget that fired or the order of events; speed is for bench/)', async (t) => {
  const wrong = findings.filter((f) => !ALLOWED.some((a) => a.file === f.file && f.finding.includes(a.assertion))).map((f) => `${f.file}:${f.finding}`);
  t.same(wrong, [], 'assertions on a time taken');
  for (const a of ALLOWED)
    t.ok(
      findings.some((f) => f.file === a.file && f.finding.includes(a.assertion)),
      `${a.file} still has ${a.assertion}`,
    );
});

t.test('the check tells a time taken from a bounded wait', async (t) => {
  const flagged = [
    't.ok(Date.now() - started < 10_000, `answered within 10 s`);',
    'const took = performance.now() - t0;\nt.ok(took <= 1000);',
    "t.equal(performance.now() - t0 < 500, true, 'fast');",
    'const r = { status: 200, ms: performance.now() - started };\nt.ok(Math.max(r.ms) < 1000);',
    "t.ok(report.elapsedMs < 5000, 'the others were not rendered');",
    "t.ok(attempt!.duration_ms >= 900, 'waited out the socket timeout');",
    'assert(Number(process.hrtime.bigint() - start) < 1e9);',
    'const whoami = [];\nwhoami.push(performance.now() - started);\nt.ok(Math.max(...whoami) < 1000);',
    'const r = { ms: performance.now() - started };\nconst all = [];\nall.push(r.ms);\nt.ok(Math.max(...all) < 1000);',
  ];
  for (const sample of flagged) t.equal(wallTimeAssertions(sample).length, 1, sample);
  const fine = [
    'const deadline = Date.now() + 5000;\nwhile (Date.now() < deadline && !done) await sleep(20);\nt.ok(done);',
    'while (res.statusCode === 302 && Date.now() - start < 3000) res = await get();\nt.equal(res.statusCode, 200);',
    "t.equal(opens, 1, 'the open is recorded after ' + (Date.now() - start) + ' ms');",
    "t.ok(act.p95_latency_ms > 0, 'a measured p95');",
    't.ok(ids.every((id) => millisOf(id) >= before && millisOf(id) <= after));',
    "t.ok(wait >= 14_000 && wait <= 14_002, 'on the injected clock');",
    't.match(run.body.data, { elapsed_ms: Number, triggered: true });',
    't.ok(sleepy.max_ms >= sleepy.p99_ms);',
    'const hour = new Date(Math.floor((Date.now() - 2 * 3_600_000) / 3_600_000) * 3_600_000);\nt.same(rows, [{ hour }]);',
    'const old = new Date(Date.now() - ageDays * DAY);\nt.equal(row.at.getTime(), old.getTime());',
  ];
  for (const sample of fine) t.same(wallTimeAssertions(sample), [], sample);
});
