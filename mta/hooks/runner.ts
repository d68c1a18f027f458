// Runs a phase's handlers in priority order until one decides; a handler that throws, times out or answers nonsense fails closed (451 4.3.0).
import type { Logger } from '../../shared/kernel/log.js';
import {
  localFailure,
  PHASE_DEFAULTS,
  PHASES,
  type Decision,
  type FinalDecision,
  type Handler,
  type Phase,
  type PhaseContexts,
  type Plugin,
} from './phases.js';

export interface EnabledPlugin {
  plugin: Plugin;
  /** Lower runs first; a tie keeps the order plugins were given in. */
  priority: number;
}

export interface RunnerOptions {
  /** How long one handler of the phase may take (milliseconds). */
  timeoutMs(phase: Phase): number;
  log: Logger;
}

/** The decision that ended a phase, and the plugin that took it (undefined: the phase default). */
export interface Outcome {
  decision: FinalDecision;
  plugin: string | undefined;
}

interface Registered {
  plugin: string;
  handle: Handler<Phase>;
}

const TIMED_OUT = Symbol('timed out');
const NEVER_ABORTED = new AbortController().signal;
const CONTROL = /[\x00-\x1f\x7f]/;

export class HookRunner {
  private readonly byPhase = new Map<Phase, Registered[]>();

  constructor(
    plugins: EnabledPlugin[],
    private readonly options: RunnerOptions,
  ) {
    const ordered = plugins.map((p, order) => ({ ...p, order })).sort((a, b) => a.priority - b.priority || a.order - b.order);
    for (const phase of PHASES) {
      const list: Registered[] = [];
      for (const { plugin } of ordered) {
        const handle = plugin.hooks[phase] as Handler<Phase> | undefined;
        if (handle) list.push({ plugin: plugin.name, handle });
      }
      this.byPhase.set(phase, list);
    }
  }

  /** The plugins with a handler for `phase`, in the order they run. */
  handlersOf(phase: Phase): string[] {
    return (this.byPhase.get(phase) ?? []).map((r) => r.plugin);
  }

  /** Runs the phase. Never throws: every failure is a 451 decision. */
  async run<P extends Phase>(phase: P, ctx: PhaseContexts[P]): Promise<Outcome> {
    for (const handler of this.byPhase.get(phase) ?? []) {
      const decision = await this.call(phase, handler, ctx);
      if (decision.kind !== 'continue') return { decision, plugin: handler.plugin };
    }
    return { decision: PHASE_DEFAULTS[phase], plugin: undefined };
  }

  private async call(phase: Phase, handler: Registered, ctx: PhaseContexts[Phase]): Promise<Decision> {
    const failed = (why: string, err?: unknown) => {
      this.options.log.error({ err, plugin: handler.plugin, phase }, `MX plugin ${handler.plugin} ${why} in phase ${phase}: answering 451`);
      return localFailure();
    };
    // Most handlers take no signal: they share one that never aborts (an AbortController costs more than many a handler).
    const controller = handler.handle.length >= 2 ? new AbortController() : undefined;
    let answer: Decision | Promise<Decision>;
    try {
      answer = handler.handle(ctx, controller?.signal ?? NEVER_ABORTED);
    } catch (err) {
      return failed('threw', err);
    }
    let decision: unknown = answer;
    if (isThenable(answer)) {
      const work = Promise.resolve(answer);
      const ms = this.options.timeoutMs(phase);
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<typeof TIMED_OUT>((resolve) => (timer = setTimeout(() => resolve(TIMED_OUT), ms)));
      try {
        decision = await Promise.race([work, timeout]);
      } catch (err) {
        return failed('threw', err);
      } finally {
        clearTimeout(timer);
      }
      if (decision === TIMED_OUT) {
        controller?.abort(new Error(`timed out after ${ms} ms`));
        // Whatever it does later is no longer waited for, and must not surface as an unhandled rejection.
        work.catch((err: unknown) => this.options.log.debug({ err, plugin: handler.plugin, phase }, 'MX plugin failed after its timeout'));
        return failed(`did not answer within ${ms} ms`);
      }
    }
    const problem = invalidDecision(decision);
    return problem === undefined ? (decision as Decision) : failed(`returned an invalid decision (${problem})`);
  }
}

function isThenable(value: unknown): value is PromiseLike<Decision> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/** Why a handler's answer is not a decision this server can reply with; undefined when it is one. */
function invalidDecision(value: unknown): string | undefined {
  const d = value as Partial<Record<string, unknown>> | null | undefined;
  if (typeof d !== 'object' || d === null) return 'not an object';
  switch (d['kind']) {
    case 'continue':
      return undefined;
    case 'accept':
      return d['text'] === undefined || (typeof d['text'] === 'string' && !CONTROL.test(d['text'])) ? undefined : 'bad text';
    case 'reject':
    case 'defer': {
      const klass = d['kind'] === 'reject' ? 5 : 4;
      const code = d['code'];
      if (typeof code !== 'number' || !Number.isInteger(code) || Math.floor(code / 100) !== klass) return `code ${String(code)} is not ${klass}xx`;
      const enhanced = d['enhanced'];
      if (typeof enhanced !== 'string' || !new RegExp(`^${klass}\\.\\d{1,3}\\.\\d{1,3}$`).test(enhanced))
        return `enhanced code ${String(enhanced)} is not ${klass}.x.x`;
      if (typeof d['text'] !== 'string' || CONTROL.test(d['text'])) return 'bad text';
      return undefined;
    }
    default:
      return `unknown kind ${String(d['kind'])}`;
  }
}
