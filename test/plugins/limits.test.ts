// Plugin limits: SIZE= at MAIL, the message size at DATA, recipients per message and the optional line-length limit, as decisions.
import t from 'tap';
import { loadConfig, type Env } from '../../shared/config/index.js';
import { createLogger } from '../../shared/kernel/log.js';
import limits, { longestLine } from '../../plugins/limits.js';
import type { MxDeps } from '../../mta/inbound/deps.js';
import type { Decision, PhaseContexts, Plugin, Recipient, Transaction } from '../../mta/hooks/phases.js';

const pluginWith = (env: Env = {}): Plugin =>
  limits({
    config: loadConfig({ MAILPATH_CONFIG__INBOUND__LIMITS__MAX_MESSAGE_BYTES: '2048', MAILPATH_CONFIG__INBOUND__LIMITS__MAX_RECIPIENTS: '2', ...env }),
  } as MxDeps);
const session = {
  id: 's',
  remoteAddress: '127.0.0.1',
  remotePort: 1,
  clientHostname: '[127.0.0.1]',
  secure: false,
  helo: 'c',
  protocol: 'ESMTP',
  log: createLogger('silent'),
};
const tx = (mailParams: Record<string, string | true> = {}, recipients: string[] = []): Transaction => ({
  id: 'tx',
  mailFrom: 'a@b.example',
  mailParams,
  recipients: recipients.map((address) => ({ address, sourceRoute: undefined })),
  headers: [],
});
const signal = new AbortController().signal;
const run = async <P extends 'mail' | 'rcpt' | 'data'>(plugin: Plugin, phase: P, ctx: PhaseContexts[P]): Promise<Decision> =>
  (plugin.hooks[phase] as (c: PhaseContexts[P], s: AbortSignal) => Decision | Promise<Decision>)(ctx, signal);
const TOO_BIG = { kind: 'reject', code: 552, enhanced: '5.3.4' };

t.test('MAIL: a declared SIZE over the limit is refused with 552 5.3.4; within it, or undeclared, goes on', async (t) => {
  const plugin = pluginWith();
  t.match(await run(plugin, 'mail', { session, transaction: tx({ SIZE: '2049' }) }), { ...TOO_BIG, text: /2048 bytes/ });
  t.same(await run(plugin, 'mail', { session, transaction: tx({ SIZE: '2048' }) }), { kind: 'continue' });
  t.same(await run(plugin, 'mail', { session, transaction: tx() }), { kind: 'continue' });
});

t.test('RCPT: past max_recipients 452 4.5.3; an address already in the transaction (any case) does not count again', async (t) => {
  const plugin = pluginWith();
  const recipient = (address: string): Recipient => ({ address, sourceRoute: undefined });
  t.same(await run(plugin, 'rcpt', { session, transaction: tx({}, ['a@x.example']), recipient: recipient('b@x.example') }), { kind: 'continue' });
  t.match(await run(plugin, 'rcpt', { session, transaction: tx({}, ['a@x.example', 'b@x.example']), recipient: recipient('c@x.example') }), {
    kind: 'defer',
    code: 452,
    enhanced: '4.5.3',
    text: 'too many recipients: at most 2 per message',
  });
  t.same(await run(plugin, 'rcpt', { session, transaction: tx({}, ['a@x.example', 'b@x.example']), recipient: recipient('B@x.example') }), {
    kind: 'continue',
  });
});

t.test('DATA: a message over the limit (counted or flagged by the server) is 552 5.3.4', async (t) => {
  const plugin = pluginWith();
  const data = (size: number, sizeExceeded = false) => ({
    session,
    transaction: tx(),
    message: { bytes: Buffer.alloc(sizeExceeded ? 0 : size, 'a'), size, sizeExceeded },
  });
  t.same(await run(plugin, 'data', data(2048)), { kind: 'continue' });
  t.match(await run(plugin, 'data', data(2049)), TOO_BIG);
  t.match(await run(plugin, 'data', data(100, true)), TOO_BIG);
});

t.test('DATA: max_line_length (off by default) refuses a message with a longer line', async (t) => {
  const text = (line: number) => Buffer.from(`Subject: x\r\n\r\n${'y'.repeat(line)}\r\nshort\n`);
  const data = (bytes: Buffer) => ({ session, transaction: tx(), message: { bytes, size: bytes.length, sizeExceeded: false } });
  t.same(await run(pluginWith(), 'data', data(text(1500))), { kind: 'continue' }, 'off: any length');
  const strict = pluginWith({ MAILPATH_CONFIG__INBOUND__LIMITS__MAX_LINE_LENGTH: '998' });
  t.same(await run(strict, 'data', data(text(998))), { kind: 'continue' });
  t.match(await run(strict, 'data', data(text(999))), { ...TOO_BIG, text: /longer than 998 bytes/ });
});

t.test('longestLine counts bytes without the line ending, bare LF and a last line without one included', async (t) => {
  t.equal(longestLine(Buffer.from('')), 0);
  t.equal(longestLine(Buffer.from('abc\r\nde\r\n')), 3);
  t.equal(longestLine(Buffer.from('ab\nabcd')), 4);
  t.equal(longestLine(Buffer.from('\r\n\r\n')), 0);
});
