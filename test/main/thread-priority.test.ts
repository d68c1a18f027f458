// Helper threads below the event loop: every thread of the process but the main one is lowered by the configured nice levels (libuv's pool started first, so
// its threads are among them), relative to the event loop's own priority; 0 changes nothing; the config key is read and checked.
import t from 'tap';
import { generateKeyPairSync, sign } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { helperNice, lowerHelperThreads } from '../../main/thread-priority.js';
import { ConfigError, loadConfig } from '../../shared/config/index.js';

/** Each thread's nice value, from /proc (field 19 of stat; the command name may contain spaces, so fields count after it). */
function niceByThread(): Map<string, number> {
  const nice = new Map<string, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      nice.set(tid, Number(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]));
    } catch {
      // ended meanwhile
    }
  }
  return nice;
}

t.test('the helpers keep their order below the event loop, capped at 19', async (t) => {
  t.equal(helperNice(0, 10), 10);
  t.equal(helperNice(5, 10), 15, 'a process started under nice keeps its helpers below its event loop');
  t.equal(helperNice(15, 10), 19, 'never beyond the lowest priority');
  t.equal(helperNice(0, 0), 0);
});

t.test('0 leaves every thread as it is', async (t) => {
  const before = niceByThread();
  t.equal(await lowerHelperThreads(0), 0);
  t.same(niceByThread(), before);
});

t.test('every helper thread is lowered, the event loop is not', async (t) => {
  const mainNice = niceByThread().get(String(process.pid))!;
  const lowered = await lowerHelperThreads(3);
  const after = niceByThread();
  // libuv's pool alone has four threads (UV_THREADPOOL_SIZE), started by the call if nothing had started it.
  t.ok(lowered >= 4, `libuv's pool and V8's helpers lowered (${lowered} threads)`);
  t.equal(after.get(String(process.pid)), mainNice, 'the event loop keeps its priority');
  const helpers = [...after].filter(([tid]) => tid !== String(process.pid));
  t.equal(helpers.length, lowered, 'every other thread was lowered');
  t.same(
    helpers.filter(([, nice]) => nice !== helperNice(mainNice, 3)),
    [],
    `each now at nice ${helperNice(mainNice, 3)}`,
  );

  // The pool still does its work (an RSA signature runs there).
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
  const signature = await new Promise<Buffer>((resolve, reject) => sign('sha256', Buffer.from('x'), privateKey, (err, s) => (err ? reject(err) : resolve(s))));
  t.equal(signature.length, 128, 'an RSA signature on the lowered pool');
});

t.test('config/runtime.yaml: helper_thread_nice, 10 by default, 0..19', async (t) => {
  t.equal(loadConfig({}).runtime.helper_thread_nice, 10);
  t.equal(loadConfig({ MAILPATH_CONFIG__RUNTIME__HELPER_THREAD_NICE: '0' }).runtime.helper_thread_nice, 0);
  t.throws(() => loadConfig({ MAILPATH_CONFIG__RUNTIME__HELPER_THREAD_NICE: '20' }), ConfigError);
  t.throws(() => loadConfig({ MAILPATH_CONFIG__RUNTIME__HELPER_THREAD_NICE: '-1' }), ConfigError);
});
