// CPU accounting for the benchmarks, from /proc (Linux): per process, all of PostgreSQL, and the whole machine.
import { readFileSync, readdirSync } from 'node:fs';

/** CPU seconds (user + system) a process has used, from /proc (Linux); 0 when it is gone. */
export function cpuSecondsOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** CPU seconds of every PostgreSQL process (backends, WAL writer, checkpointer) on the machine, by pid. */
function postgresCpuByPid(): Map<number, number> {
  const byPid = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres') byPid.set(Number(entry), cpuSecondsOf(Number(entry)));
    } catch {
      // gone meanwhile
    }
  }
  return byPid;
}

/** CPU seconds the whole machine has been busy (all cores), from /proc/stat. */
export function machineBusySeconds(): number {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const [user, nice, system, , , irq, softirq, steal] = ticks.map(Number);
  return (user! + nice! + system! + irq! + softirq! + steal!) / 100;
}

/** CPU seconds per thread name (node's main thread, libuv's pool, V8's GC and compiler threads) of a process. */
export function threadCpuSeconds(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
        const fields = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ');
        const key = tid === String(pid) ? 'main' : name;
        byName.set(key, (byName.get(key) ?? 0) + (Number(fields[11]) + Number(fields[12])) / 100);
      } catch {
        // thread gone meanwhile
      }
    }
  } catch {
    // process gone
  }
  return byName;
}

/**
 * CPU milliseconds per message of each Mailpath process and of PostgreSQL over a phase. `postgresPids` names the
 * PostgreSQL processes that count (the bench database's backends and the server's own background processes): on a
 * machine shared with other databases, every other backend's work would count too, and one that exits would
 * subtract its whole life's CPU.
 */
export async function measuredCpu<T>(
  /** The front process, then the outbound process(es). */
  children: { pid: number }[],
  messages: number,
  phase: () => Promise<T>,
  postgresPids?: () => Promise<number[]>,
): Promise<{ result: T; perMessage: string }> {
  const before = children.map((c) => cpuSecondsOf(c.pid));
  const pgBefore = postgresCpuByPid();
  const machineBefore = machineBusySeconds();
  const result = await phase();
  const after = children.map((c) => cpuSecondsOf(c.pid));
  const pgAfter = postgresCpuByPid();
  const counted = postgresPids ? await postgresPids() : [...pgAfter.keys()].filter((pid) => pgBefore.has(pid));
  const pgSeconds = counted.reduce((sum, pid) => sum + Math.max(0, (pgAfter.get(pid) ?? 0) - (pgBefore.get(pid) ?? 0)), 0);
  const machine = ((machineBusySeconds() - machineBefore) * 1000) / messages;
  const ms = [...after.map((a, i) => ((a - before[i]!) * 1000) / messages), (pgSeconds * 1000) / messages];
  const total = ms.reduce((a, b) => a + b, 0);
  // children: the front process, then the outbound process(es); the last figure is PostgreSQL's.
  const outbound = ms.slice(1, -1);
  const outboundSum = outbound.reduce((a, b) => a + b, 0);
  const each = outbound.length > 1 ? ` = ${outbound.map((m) => m.toFixed(2)).join(' + ')}` : '';
  return {
    result,
    perMessage:
      `CPU per message ${total.toFixed(2)} ms (front ${ms[0]!.toFixed(2)}, outbound ${outboundSum.toFixed(2)}${each}, PostgreSQL ` +
      `${ms[ms.length - 1]!.toFixed(2)}); whole machine ${machine.toFixed(2)} ms`,
  };
}

/**
 * CPU seconds this process's main thread (its thread id is the pid) has used: where an in-process server
 * does its work, apart from worker threads such as autocannon's. Per request it is a cost figure the
 * machine's other load hardly moves, unlike req/s.
 */
export function mainThreadCpuSeconds(): number {
  return cpuSecondsOf(process.pid) === 0 ? 0 : threadSeconds(`/proc/${process.pid}/task/${process.pid}/stat`);
}

function threadSeconds(statPath: string): number {
  try {
    const fields = readFileSync(statPath, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/**
 * Nanoseconds a thread has run on a core and waited for one while runnable (/proc/<pid>/task/<tid>/schedstat; the
 * main thread's tid is the pid). An event loop that is busy but not on a core is queued behind other threads: its
 * wait share says how much the machine's other work slows it down.
 */
export function threadSchedNs(pid: number, tid = pid): { runNs: number; waitNs: number } {
  try {
    const [run, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').trim().split(/\s+/).map(Number);
    return { runNs: run ?? 0, waitNs: wait ?? 0 };
  } catch {
    return { runNs: 0, waitNs: 0 };
  }
}
