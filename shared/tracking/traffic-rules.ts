// Which opens are a machine's (mail-provider proxies, Apple Mail Privacy Protection, bots) and which clicks a security scanner's, by the rules of config/tracking.yaml; the "every link at once" rule needs the send's earlier clicks and is applied by the recorder.
import { isbot } from 'isbot';
import type { TrackingConfig } from '../config/index.js';

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

export class TrafficRules {
  private readonly machineAgents: RegExp[];
  private readonly proxyAgents: RegExp[];
  private readonly scannerAgents: RegExp[];

  constructor(private readonly config: TrackingConfig) {
    this.machineAgents = compile(config.machine_opens.user_agents);
    this.proxyAgents = compile(config.machine_opens.proxy_user_agents);
    this.scannerAgents = compile(config.scanner_clicks.user_agents);
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
    if (this.machineAgents.some((re) => re.test(ua))) return flagged('machine_user_agent');
    if (this.proxyAgents.some((re) => re.test(ua))) {
      const prefetch = hit.secondsSinceDelivery !== null && hit.secondsSinceDelivery <= rules.proxy_window_seconds;
      return prefetch ? flagged('proxy_prefetch') : HUMAN;
    }
    if (rules.bots && isbot(ua)) return flagged('bot');
    return HUMAN;
  }

  /**
   * A scanner click (all reasons that apply): no User-Agent, a known scanner's User-Agent, a bot by isbot
   * (when bots is on), or within delivery_window_seconds of delivery.
   */
  click(hit: HitFacts): Verdict {
    const rules = this.config.scanner_clicks;
    const ua = hit.userAgent.trim();
    const reasons: string[] = [];
    if (ua === '') reasons.push('no_user_agent');
    else if (this.scannerAgents.some((re) => re.test(ua))) reasons.push('scanner_user_agent');
    else if (rules.bots && isbot(ua)) reasons.push('bot');
    if (hit.secondsSinceDelivery !== null && hit.secondsSinceDelivery <= rules.delivery_window_seconds) reasons.push('soon_after_delivery');
    return { flagged: reasons.length > 0, reasons };
  }
}

const HUMAN: Verdict = { flagged: false, reasons: [] };
const flagged = (reason: string): Verdict => ({ flagged: true, reasons: [reason] });
