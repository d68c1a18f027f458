// CPU accounting for the benchmarks, from /proc (Linux): per process, all of PostgreSQL, and the whole machine.
import { readFileSync, readdirSync } from 'node:fs';

/** CPU seconds (user + system) a process has used, from /proc (Linux); 0 when it is gone. */
function cpuSecondsOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** CPU seconds of every PostgreSQL process (backends, WAL writer, checkpointer) on the machine. */
function postgresCpuSeconds(): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres') total += cpuSecondsOf(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

/** CPU seconds the whole machine has been busy (all cores), from /proc/stat. */
export function machineBusySeconds(): number {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const [user, nice, system, , , irq, softirq, steal] = ticks.map(Number);
  return (user! + nice! + system! + irq! + softirq! + steal!) / 100;
}

/** CPU milliseconds per message of each Mailpath process and of PostgreSQL over a phase. */
export async function measuredCpu<T>(children: { pid: number }[], messages: number, phase: () => Promise<T>): Promise<{ result: T; perMessage: string }> {
  const before = [...children.map((c) => cpuSecondsOf(c.pid)), postgresCpuSeconds()];
  const machineBefore = machineBusySeconds();
  const result = await phase();
  const after = [...children.map((c) => cpuSecondsOf(c.pid)), postgresCpuSeconds()];
  const machine = ((machineBusySeconds() - machineBefore) * 1000) / messages;
  const ms = after.map((a, i) => ((a - before[i]!) * 1000) / messages);
  const total = ms.reduce((a, b) => a + b, 0);
  return {
    result,
    perMessage: `CPU per message ${total.toFixed(2)} ms (front ${ms[0]!.toFixed(2)}, outbound ${ms[1]!.toFixed(2)}, PostgreSQL ${ms[2]!.toFixed(2)}); whole machine ${machine.toFixed(2)} ms`,
  };
}
