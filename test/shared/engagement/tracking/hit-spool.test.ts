// The hit spool's files: what an append puts on disk, segments deleted only once every hit in them is settled, a torn
// last line left out, and segments of a stopped process claimed by one process only, never those of a running one.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { decodeSegment, HitSpool, ownerAlive, processToken, type SpooledHit } from '../../../../shared/engagement/tracking/hit-spool.js';

const AT = new Date('2026-05-04T10:00:00.123Z');
const hit = (n: number, kind: 'open' | 'click' = 'click'): SpooledHit => ({
  id: `0190a0b0-0000-7000-8000-${String(n).padStart(12, '0')}`,
  hit:
    kind === 'click'
      ? {
          kind,
          sendId: '5e9d1c1e-7a43-4c5e-9a53-2f1f0a1b2c3d',
          url: 'https://shop.example/a?x=1&y=é',
          links: 3,
          userAgent: 'Mozilla/5.0 "quoted"',
          ip: '192.0.2.0',
          at: AT,
        }
      : { kind, sendId: '5e9d1c1e-7a43-4c5e-9a53-2f1f0a1b2c3d', url: undefined, links: undefined, userAgent: '', ip: null, at: AT },
});

function spoolDir(t: { teardown(fn: () => unknown): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'mailpath-spool-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A spooled line as the spool writes it (written here by hand: the format is what a later process reads back). */
const line = ({ id, hit }: SpooledHit) =>
  `${JSON.stringify({ id, kind: hit.kind, sendId: hit.sendId, url: hit.url, links: hit.links, userAgent: hit.userAgent, ip: hit.ip, at: hit.at.getTime() })}\n`;

/** A token no running process has: a pid above Linux's pid_max. */
const DEAD = '4999999-12345-0';

t.test('an append is on disk when it resolves, and reads back as it was', async (t) => {
  const dir = spoolDir(t);
  const spool = await HitSpool.open(dir, { segmentHits: 100 });
  const [a, b] = await Promise.all([spool.append(hit(1)), spool.append(hit(2, 'open'))]);
  t.equal(a, b, 'hits appended together share a segment');
  t.same(readdirSync(dir), [a.path.slice(dir.length + 1)]);
  t.same(decodeSegment(readFileSync(a.path, 'utf8')), [hit(1), hit(2, 'open')]);
  await spool.close();
  t.same(readdirSync(dir).length, 1, 'closed with unsettled hits: the segment stays for a replay');
});

t.test('a segment is deleted once sealed and every hit in it is settled, not before', async (t) => {
  const dir = spoolDir(t);
  const spool = await HitSpool.open(dir, { segmentHits: 2 });
  const first = await spool.append(hit(1));
  await spool.append(hit(2));
  const second = await spool.append(hit(3));
  t.not(first, second, 'the third hit starts a new segment');
  t.equal(readdirSync(dir).length, 2);
  spool.settle(first);
  await new Promise((resolve) => setTimeout(resolve, 20));
  t.equal(readdirSync(dir).length, 2, 'one of two hits settled: kept');
  spool.settle(first);
  await new Promise((resolve) => setTimeout(resolve, 20));
  t.same(readdirSync(dir), [second.path.slice(dir.length + 1)], 'all settled and sealed: deleted');
  spool.settle(second);
  await new Promise((resolve) => setTimeout(resolve, 20));
  t.equal(readdirSync(dir).length, 1, 'the open segment stays while it takes hits');
  await spool.close();
  t.same(readdirSync(dir), [], 'closing seals it, and everything in it was settled');
  await t.rejects(spool.append(hit(4)), /closed/);
});

t.test('a last line without its newline was never fsynced whole and is left out', async (t) => {
  const text = `${line(hit(1, 'open'))}{"id":"0190a0b0-0000-7000-8000-0000`;
  t.same(
    decodeSegment(text).map((h) => h.id),
    [hit(1).id],
  );
  t.same(decodeSegment(''), []);
});

t.test('owners: a running process (with its start time) is alive; an unknown pid, or the same pid started at another time, is not', async (t) => {
  t.ok(ownerAlive(processToken(process.pid)));
  t.ok(ownerAlive(processToken(process.ppid, 3)));
  t.notOk(ownerAlive(DEAD));
  t.notOk(ownerAlive(`${process.pid}-1-0`), 'the pid was reused by this process, which started later');
  t.notOk(ownerAlive('garbage'));
});

t.test("orphans: a stopped process's segments are claimed once (complete lines only); a running one's are left alone", async (t) => {
  const dir = spoolDir(t);
  writeFileSync(join(dir, `${DEAD}.00000000.hits`), `${line(hit(1))}${line(hit(2))}{"id":"torn`);
  writeFileSync(join(dir, `${DEAD}.00000001.hits`), '');
  const live = `${processToken(process.ppid)}.00000000.hits`;
  writeFileSync(join(dir, live), line(hit(9)));

  const [a, b] = [await HitSpool.open(dir, { segmentHits: 100 }), await HitSpool.open(dir, { segmentHits: 100 })];
  const [fromA, fromB] = await Promise.all([a.claimOrphans(), b.claimOrphans()]);
  const claimed = [...fromA, ...fromB].filter((c) => c.hits.length > 0);
  t.equal(claimed.length, 1, 'one spool won the segment with hits');
  t.same(claimed[0]!.hits, [hit(1), hit(2)]);
  t.notOk(
    readdirSync(dir).some((n) => n.startsWith(DEAD)),
    'both of the stopped process’s segments renamed',
  );
  t.ok(readdirSync(dir).includes(live), 'the running process’s segment untouched');
  t.equal(readdirSync(dir).length, 2, 'the empty orphan deleted at once; the claimed one kept until its hits settle');
  const { segment } = claimed[0]!;
  const owner = fromA.includes(claimed[0]!) ? a : b;
  owner.settle(segment);
  owner.settle(segment);
  await new Promise((resolve) => setTimeout(resolve, 20));
  t.same(readdirSync(dir), [live]);
  t.same(await a.claimOrphans(), [], 'nothing left to claim');
});

t.test('orphans are claimed at most `limit` at a time, oldest first', async (t) => {
  const dir = spoolDir(t);
  for (const n of [2, 1, 3]) writeFileSync(join(dir, `${DEAD}.0000000${n}.hits`), line(hit(n, 'open')));
  const spool = await HitSpool.open(dir, { segmentHits: 100 });
  const first = await spool.claimOrphans(1);
  t.same(
    first.map((c) => c.hits[0]!.id),
    [hit(1).id],
  );
  t.same(
    (await spool.claimOrphans(5)).map((c) => c.hits[0]!.id),
    [hit(2).id, hit(3).id],
  );
});
