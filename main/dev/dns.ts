// The dev DNS server: a real authoritative DNS server on loopback (UDP and TCP on one port) whose answers come from an async zone, so `mailpath dev`
// verification runs the real look-up code against a real server.
import type { Socket } from 'node:net';
import { isIPv6 } from 'node:net';
import { Packet, createTCPServer, createUDPServer, type DnsHandler, type TCPServer, type UDPServer } from 'dns2';
import type { Logger } from '../../shared/kernel/log.js';

/** What the zone holds at one name; `exists: false` is NXDOMAIN. */
export interface ZoneAnswer {
  exists: boolean;
  /** TXT records, each as its character-strings (at most 255 bytes each). */
  txt: string[][];
  mx: { exchange: string; priority: number }[];
  /** IPv4 addresses answer A, IPv6 addresses AAAA. */
  addresses: string[];
}

export type Zone = (name: string) => Promise<ZoneAnswer>;

export interface DevDnsServer {
  /** "127.0.0.1:<port>": usable in MAILPATH_DNS_SERVERS. */
  address: string;
  stop(): Promise<void>;
}

// Packet.RCODE exists at run time but not in dns2's typings.
const RCODE = { SERVFAIL: 2, NXDOMAIN: 3 } as const;
/** Nothing is cached: a record Mailpath adds (a new domain, a rotation's key) is answered at once. */
const TTL = 0;

export async function startDevDns(zone: Zone, port: number, log: Logger, host = '127.0.0.1'): Promise<DevDnsServer> {
  const handle: DnsHandler = (request, send) => {
    void answer(request)
      .then(
        (response) => send(response),
        (err: unknown) => {
          log.warn({ err }, 'dev DNS: could not answer');
          const failed = Packet.createResponseFromRequest(request);
          failed.header.rcode = RCODE.SERVFAIL;
          return send(failed);
        },
      )
      .catch(() => undefined); // a client that gave up has nowhere to receive the answer
  };

  const answer = async (request: Packet): Promise<Packet> => {
    const response = Packet.createResponseFromRequest(request);
    response.header.aa = 1;
    const question = request.questions[0];
    if (question === undefined) {
      response.header.rcode = RCODE.SERVFAIL;
      return response;
    }
    const found = await zone(question.name.toLowerCase().replace(/\.$/, ''));
    if (!found.exists) {
      response.header.rcode = RCODE.NXDOMAIN;
      return response;
    }
    const base = { name: question.name, class: Packet.CLASS.IN, ttl: TTL };
    if (question.type === Packet.TYPE.TXT) {
      for (const strings of found.txt) response.answers.push(Packet.createResourceFromQuestion(question, { ...base, type: Packet.TYPE.TXT, data: strings }));
    } else if (question.type === Packet.TYPE.MX) {
      for (const mx of found.mx) response.answers.push(Packet.createResourceFromQuestion(question, { ...base, type: Packet.TYPE.MX, ...mx }));
    } else if (question.type === Packet.TYPE.A || question.type === Packet.TYPE.AAAA) {
      const wantV6 = question.type === Packet.TYPE.AAAA;
      for (const address of found.addresses) {
        if (isIPv6(address) === wantV6) response.answers.push(Packet.createResourceFromQuestion(question, { ...base, type: question.type, address }));
      }
    }
    return response;
  };

  const udp: UDPServer = createUDPServer(handle);
  await new Promise<void>((resolve, reject) => {
    udp.once('error', reject);
    void udp.listen(port, host).then(() => {
      udp.off('error', reject);
      resolve();
    });
  });
  const tcp: TCPServer = createTCPServer(handle);
  try {
    await new Promise<void>((resolve, reject) => {
      tcp.once('error', reject);
      tcp.listen(port, host, () => {
        tcp.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    await new Promise<void>((resolve) => udp.close(() => resolve()));
    throw err;
  }
  const connections = new Set<Socket>();
  tcp.on('connection', (socket: Socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });
  let stopping: Promise<void> | undefined;
  return {
    address: `${host}:${port}`,
    stop: () =>
      (stopping ??= (async () => {
        // Resolvers keep their TCP connections open; close would wait for them.
        for (const socket of connections) socket.destroy();
        await Promise.all([new Promise<void>((resolve) => udp.close(() => resolve())), new Promise<void>((resolve) => tcp.close(() => resolve()))]);
      })()),
  };
}
