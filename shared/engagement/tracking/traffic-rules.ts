// Which opens are a machine's (mail-provider proxies, Apple Mail Privacy Protection, bots) and which clicks a security scanner's, by the rules of
// config/tracking.yaml; the "every link at once" rule needs the send's earlier clicks and is applied by the recorder.
import { isbot } from 'isbot';
import type { TrackingConfig } from '../../config/index.js';

/** What a hit is judged on: its User-Agent and how long after the message's delivery it came (null: unknown). */
export interface HitFacts {
  userAgent: string;
  secondsSinceDelivery: number | null;
}

export interface Verdict {
  flagged: boolean;
  /** Why, in rule order (empty when not flagged): stored on the event as detail.reasons. */
  reasons: string[];
}

const compile = (patterns: readonly string[]) => patterns.map((p) => new RegExp(p, 'i'));

/** What the lists say of one User-Agent (independent of time): the same few agents make most hits, so it is remembered. */
interface AgentFacts {
  machine: boolean;
  proxy: boolean;
  scanner: boolean;
  bot: boolean;
}

/** Distinct User-Agents remembered; past it the memory starts over (a flood of random agents costs only the regexes). */
const MAX_REMEMBERED = 10_000;

export class TrafficRules {
  private readonly machineAgents: RegExp[];
  private readonly proxyAgents: RegExp[];
  private readonly scannerAgents: RegExp[];
  private readonly agents = new Map<string, AgentFacts>();

  constructor(private readonly config: TrackingConfig) {
    this.machineAgents = compile(config.machine_opens.user_agents);
    this.proxyAgents = compile(config.machine_opens.proxy_user_agents);
    this.scannerAgents = compile(config.scanner_clicks.user_agents);
  }

  private facts(ua: string): AgentFacts {
    let facts = this.agents.get(ua);
    if (!facts) {
      if (this.agents.size >= MAX_REMEMBERED) this.agents.clear();
      facts = {
        machine: this.machineAgents.some((re) => re.test(ua)),
        proxy: this.proxyAgents.some((re) => re.test(ua)),
        scanner: this.scannerAgents.some((re) => re.test(ua)),
        // isbot's pattern is long: asked once per agent.
        bot: isbot(ua),
      };
      this.agents.set(ua, facts);
    }
    return facts;
  }

  /** Opens of one send this close after its previous open are a replay of the pixel: stored and counted once (milliseconds). */
  get repeatOpenWindowMs(): number {
    return this.config.repeat_opens.window_seconds * 1000;
  }

  /** The scanner rule's window for clicks on every link (milliseconds) and the fewest links it applies to. */
  get allLinks(): { windowMs: number; min: number } {
    return { windowMs: this.config.scanner_clicks.all_links_window_seconds * 1000, min: this.config.scanner_clicks.all_links_min };
  }

  /**
   * A machine open: no User-Agent; a User-Agent of the always-machine list (Apple MPP's bare "Mozilla/5.0");
   * a provider's image proxy within proxy_window_seconds of delivery (a later fetch through the proxy is the
   * person opening); or, when bots is on, a bot by isbot (not asked of proxies: isbot lists them too).
   */
  open(hit: HitFacts): Verdict {
    const rules = this.config.machine_opens;
    const ua = hit.userAgent.trim();
    if (ua === '') return flagged('no_user_agent');
    const facts = this.facts(ua);
    if (facts.machine) return flagged('machine_user_agent');
    if (facts.proxy) {
      const prefetch = hit.secondsSinceDelivery !== null && hit.secondsSinceDelivery <= rules.proxy_window_seconds;
      return prefetch ? flagged('proxy_prefetch') : human();
    }
    if (rules.bots && facts.bot) return flagged('bot');
    return human();
  }

  /**
   * A scanner click (all reasons that apply): no User-Agent, a known scanner's User-Agent, a bot by isbot
   * (when bots is on), or within delivery_window_seconds of delivery.
   */
  click(hit: HitFacts): Verdict {
    const rules = this.config.scanner_clicks;
    const ua = hit.userAgent.trim();
    const reasons: string[] = [];
    const facts = ua === '' ? undefined : this.facts(ua);
    if (!facts) reasons.push('no_user_agent');
    else if (facts.scanner) reasons.push('scanner_user_agent');
    else if (rules.bots && facts.bot) reasons.push('bot');
    if (hit.secondsSinceDelivery !== null && hit.secondsSinceDelivery <= rules.delivery_window_seconds) reasons.push('soon_after_delivery');
    return { flagged: reasons.length > 0, reasons };
  }
}

const human = (): Verdict => ({ flagged: false, reasons: [] });
const flagged = (reason: string): Verdict => ({ flagged: true, reasons: [reason] });
