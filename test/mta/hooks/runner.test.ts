// The hook runner: priority order, the first decision wins, phase defaults, and fail-closed 451 on a throw, a timeout or a malformed decision.
import t from 'tap';
import { Writable } from 'node:stream';
import { createLogger } from '../../../shared/kernel/log.js';
import { HookRunner, type EnabledPlugin } from '../../../mta/hooks/runner.js';
import {
  accept,
  defer,
  PHASE_DEFAULTS,
  proceed,
  reject,
  type Decision,
  type PhaseContexts,
  type PhaseHandlers,
  type Plugin,
} from '../../../mta/hooks/phases.js';

/** A logger whose records the test can read. */
function capturingLog() {
  const records: { level: number; msg: string; plugin?: string; phase?: string }[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) records.push(JSON.parse(line));
      done();
    },
  });
  return { log: createLogger('debug', sink), records };
}

const plugin = (name: string, hooks: PhaseHandlers): Plugin => ({ name, hooks });
const session = {
  id: 's1',
  remoteAddress: '127.0.0.1',
  remotePort: 1,
  clientHostname: '[127.0.0.1]',
  secure: false,
  helo: 'c.example',
  protocol: 'ESMTP',
  log: createLogger('silent'),
};
const transaction = () => ({ id: 'tx', mailFrom: 'a@b.example', mailParams: {}, recipients: [], headers: [] });
const rcptCtx = (): PhaseContexts['rcpt'] => ({ session, transaction: transaction(), recipient: { address: 'x@y.example', sourceRoute: undefined } });
const runner = (plugins: EnabledPlugin[], timeoutMs = 1000) => {
  const captured = capturingLog();
  return { runner: new HookRunner(plugins, { timeoutMs: () => timeoutMs, log: captured.log }), records: captured.records };
};
const LOCAL_FAILURE = { kind: 'defer', code: 451, enhanced: '4.3.0' };

t.test('handlers run in priority order, ties in list order, until one decides', async (t) => {
  const calls: string[] = [];
  const step = (name: string, answer: Decision) => plugin(name, { rcpt: () => (calls.push(name), answer) });
  const { runner: r } = runner([
    { plugin: step('late', accept('late')), priority: 90 },
    { plugin: step('first-tie', proceed()), priority: 10 },
    { plugin: step('second-tie', proceed()), priority: 10 },
    { plugin: step('decides', reject(550, '5.1.1', 'no')), priority: 20 },
    { plugin: step('never', accept()), priority: 30 },
  ]);
  t.same(r.handlersOf('rcpt'), ['first-tie', 'second-tie', 'decides', 'never', 'late']);
  const outcome = await r.run('rcpt', rcptCtx());
  t.same(outcome, { decision: { kind: 'reject', code: 550, enhanced: '5.1.1', text: 'no' }, plugin: 'decides' });
  t.same(calls, ['first-tie', 'second-tie', 'decides'], 'handlers after the decision do not run');
});

t.test('a phase nobody decides takes its default: mail goes on, a recipient is refused, an unqueued message is deferred', async (t) => {
  const { runner: r } = runner([{ plugin: plugin('passive', { rcpt: () => proceed(), mail: async () => proceed() }), priority: 1 }]);
  t.same(await r.run('mail', { session, transaction: transaction() }), { decision: PHASE_DEFAULTS.mail, plugin: undefined });
  t.match(await r.run('rcpt', rcptCtx()), { decision: { kind: 'reject', code: 550, enhanced: '5.7.1' }, plugin: undefined });
  const queued = await r.run('queue', { session, transaction: transaction(), message: { bytes: Buffer.alloc(0), size: 0, sizeExceeded: false }, received: '' });
  t.match(queued.decision, { kind: 'defer', code: 451, enhanced: '4.3.0' });
  t.same(PHASE_DEFAULTS.connect.kind, 'accept');
  t.same(PHASE_DEFAULTS.data.kind, 'accept');
});

t.test('a handler that throws (at once or later) fails closed with 451 4.3.0, logged', async (t) => {
  const later = plugin('later', { rcpt: async () => Promise.reject(new Error('database down')) });
  const atOnce = plugin('at-once', {
    rcpt: () => {
      throw new Error('bug');
    },
  });
  const after = plugin('after', { rcpt: () => accept() });
  for (const failing of [later, atOnce]) {
    const { runner: r, records } = runner([
      { plugin: failing, priority: 1 },
      { plugin: after, priority: 2 },
    ]);
    const outcome = await r.run('rcpt', rcptCtx());
    t.match(outcome, { decision: LOCAL_FAILURE, plugin: failing.name }, `${failing.name}: 451, never the next plugin's acceptance`);
    t.ok(
      records.some((l) => l.level === 50 && l.plugin === failing.name && l.phase === 'rcpt'),
      'the failure is logged as an error naming the plugin and phase',
    );
  }
});

t.test('a handler past its timeout fails closed with 451, is aborted, and its late answer is ignored', async (t) => {
  let aborted = false;
  let finishLate: (d: Decision) => void = () => {};
  const slow = plugin('slow', {
    data: (_ctx, signal) =>
      new Promise<Decision>((resolve) => {
        signal.addEventListener('abort', () => (aborted = true));
        finishLate = resolve;
      }),
  });
  const { runner: r, records } = runner(
    [
      { plugin: slow, priority: 1 },
      { plugin: plugin('next', { data: () => accept() }), priority: 2 },
    ],
    30,
  );
  const outcome = await r.run('data', { session, transaction: transaction(), message: { bytes: Buffer.alloc(0), size: 0, sizeExceeded: false } });
  t.match(outcome, { decision: LOCAL_FAILURE, plugin: 'slow' });
  t.ok(aborted, 'the handler is told through its signal');
  t.ok(records.some((l) => l.level === 50 && /did not answer within 30 ms/.test(l.msg)));
  finishLate(accept());
  // A late rejection must not become an unhandled rejection either.
  const failingLate = plugin('failing-late', { data: () => new Promise<Decision>((_, rej) => setTimeout(() => rej(new Error('late')), 60)) });
  const { runner: r2 } = runner([{ plugin: failingLate, priority: 1 }], 20);
  t.match(await r2.run('data', { session, transaction: transaction(), message: { bytes: Buffer.alloc(0), size: 0, sizeExceeded: false } }), {
    decision: LOCAL_FAILURE,
  });
  await new Promise((resolve) => setTimeout(resolve, 100));
});

t.test('each phase uses its own timeout', async (t) => {
  const seen: string[] = [];
  const r = new HookRunner([{ plugin: plugin('p', { mail: async () => proceed() }), priority: 1 }], {
    timeoutMs: (phase) => (seen.push(phase), 1000),
    log: createLogger('silent'),
  });
  await r.run('mail', { session, transaction: transaction() });
  t.same(seen, ['mail']);
});

t.test('a malformed decision fails closed: wrong class of code, bad enhanced code, control characters, unknown kind', async (t) => {
  const bad: unknown[] = [
    { kind: 'reject', code: 451, enhanced: '4.3.0', text: 'a reject must be 5xx' },
    { kind: 'defer', code: 550, enhanced: '5.7.1', text: 'a defer must be 4xx' },
    { kind: 'reject', code: 550, enhanced: '4.7.1', text: 'class mismatch' },
    { kind: 'reject', code: 550, enhanced: '5.7', text: 'short' },
    { kind: 'reject', code: 550, enhanced: '5.7.1', text: 'line\r\n250 injected' },
    { kind: 'accept', text: 'ok\r\n' },
    { kind: 'maybe' },
    undefined,
    'accept',
  ];
  for (const answer of bad) {
    const { runner: r } = runner([
      { plugin: plugin('odd', { rcpt: () => answer as Decision }), priority: 1 },
      { plugin: plugin('after', { rcpt: () => accept() }), priority: 2 },
    ]);
    t.match(await r.run('rcpt', rcptCtx()), { decision: LOCAL_FAILURE, plugin: 'odd' }, JSON.stringify(answer) ?? 'undefined');
  }
  const { runner: fine } = runner([{ plugin: plugin('fine', { rcpt: () => defer(452, '4.5.3', 'too many') }), priority: 1 }]);
  t.same((await fine.run('rcpt', rcptCtx())).decision, { kind: 'defer', code: 452, enhanced: '4.5.3', text: 'too many' });
});

t.test('a plugin without a handler for a phase is skipped there', async (t) => {
  const { runner: r } = runner([{ plugin: plugin('mail-only', { mail: () => reject(550, '5.7.1', 'no senders') }), priority: 1 }]);
  t.same(r.handlersOf('rcpt'), []);
  t.same(r.handlersOf('mail'), ['mail-only']);
  t.match((await r.run('connect', { session })).decision, { kind: 'accept' });
});
