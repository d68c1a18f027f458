// One delivery attempt of one message: route the recipient's domain, then try its hosts in order until one gives the transaction an answer.
import { isIP } from 'node:net';
import type { DnsResolver } from '../../../shared/kernel/dns.js';
import type { AttemptResult, SmtpOutcome } from '../../../shared/delivery/classify.js';
import { hopAddresses, resolveRoute } from './route.js';
import type { Transports } from './transports.js';

/** More would mostly add timeouts: a domain with this many unreachable addresses is down for now. */
export const MAX_CONNECTION_TRIES = 6;

export interface AttemptInput {
  to: string;
  envelopeFrom: string;
  message: Buffer;
}

export interface AttemptDeps {
  dns: DnsResolver;
  transports: Transports;
  relay: string | undefined;
  port: number;
  /** The local address every connection of this attempt goes out from (see shared/ip-pools). */
  localAddress?: string;
  /**
   * True for an outcome that must end the attempt even at the connection level: a reply saying
   * the source address is blocked (the next host would only be asked from the same address).
   */
  stopOn?(outcome: SmtpOutcome): boolean;
}

/**
 * Delivers `input` once. Hosts are tried in preference order while the failure is at the
 * connection level (RFC 5321 §5.1); a reply to the transaction itself, good or bad, ends the
 * attempt. When every host failed, the last failure is the outcome.
 */
export async function attemptDelivery(deps: AttemptDeps, input: AttemptInput, signal: AbortSignal): Promise<AttemptResult> {
  const domain = input.to.slice(input.to.lastIndexOf('@') + 1);
  const route = await resolveRoute(deps.dns, domain, { relay: deps.relay, port: deps.port });
  if (route.kind === 'fail') return { outcome: route.outcome, remoteHost: null };
  let last: AttemptResult | undefined;
  let tries = 0;
  for (const hop of route.hops) {
    let addresses: string[];
    try {
      addresses = await hopAddresses(deps.dns, hop);
    } catch (err) {
      last = { outcome: { kind: 'dns', text: (err as Error).message }, remoteHost: hop.host };
      continue;
    }
    if (addresses.length === 0) {
      last ??= { outcome: { kind: 'dns', text: `MX host ${hop.host} of ${domain} has no address` }, remoteHost: hop.host };
      continue;
    }
    for (const address of addresses) {
      if (tries >= MAX_CONNECTION_TRIES || signal.aborted) {
        return last ?? { outcome: { kind: 'network', text: 'the delivery deadline passed before a host was tried' }, remoteHost: null };
      }
      tries++;
      const dest = { host: hop.host, address, port: hop.port, ...(deps.localAddress !== undefined ? { localAddress: deps.localAddress } : {}) };
      const sent = await deps.transports.send(dest, { from: input.envelopeFrom, to: input.to }, input.message, signal);
      last = { outcome: sent.outcome, remoteHost: describeHost(hop.host, address) };
      if (!sent.connectionLevel || deps.stopOn?.(sent.outcome)) return last;
    }
  }
  return last ?? { outcome: { kind: 'dns', text: `no host of ${domain} could be tried` }, remoteHost: null };
}

function describeHost(host: string, address: string): string {
  return host === address || isIP(host) !== 0 ? address : `${host} [${address}]`;
}
