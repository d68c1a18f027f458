// A real authoritative DNS server on 127.0.0.1 (UDP and TCP on one port) whose records tests set by hand.
import { isIPv6, type Socket } from 'node:net';
import { Packet, createTCPServer, createUDPServer, type DnsHandler, type TCPServer, type UDPServer } from 'dns2';

export interface TestDnsServer {
  address: string; // "127.0.0.1:<port>" — usable directly in MAILPATH_DNS_SERVERS / createResolver
  port: number;
  /**
   * Replace all TXT records at name. Each record is a string (split automatically into 255-byte character-strings) or an explicit array of character-strings
   * (to test multi-string records).
   */
  setTxt(name: string, records: (string | string[])[]): void;
  setMx(name: string, records: { exchange: string; priority: number }[]): void;
  /** IPv4 addresses answer A queries, IPv6 addresses answer AAAA queries. */
  setA(name: string, addresses: string[]): void;
  remove(name: string, type?: 'TXT' | 'MX' | 'A'): void;
  /** 'answer' (default), 'timeout' (never reply), 'servfail' — for the whole server. */
  setMode(mode: 'answer' | 'timeout' | 'servfail'): void;
  /** How many queries were received (for assertions). */
  queries(): number;
  stop(): Promise<void>;
}

interface Zone {
  txt?: Buffer[][];
  mx?: { exchange: string; priority: number }[];
  a?: string[];
}

// Node turns c-ares's query cache off today; zero keeps a changed record visible at once should that change.
const TTL = 0;
const BIND_ATTEMPTS = 20;
// Packet.RCODE exists at run time but not in dns2's typings.
const RCODE = { SERVFAIL: 2, NXDOMAIN: 3 } as const;

const normalise = (name: string): string => name.toLowerCase().replace(/\.$/, '');

/** Splits on byte boundaries: a character-string is at most 255 bytes (RFC 1035 §3.3), and dns2 does not split. */
function characterStrings(record: string): Buffer[] {
  const bytes = Buffer.from(record, 'utf8');
  const parts: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += 255) parts.push(bytes.subarray(at, at + 255));
  return parts.length > 0 ? parts : [Buffer.alloc(0)];
}

/** An explicit character-string the test chose: refused if it could not be one on the wire. */
function explicitString(s: string): Buffer {
  const bytes = Buffer.from(s, 'utf8');
  if (bytes.length > 255) throw new Error(`a TXT character-string is at most 255 bytes, got ${bytes.length}`);
  return bytes;
}

export async function startDnsServer(t?: { teardown(fn: () => unknown): void }): Promise<TestDnsServer> {
  const zones = new Map<string, Zone>();
  let mode: 'answer' | 'timeout' | 'servfail' = 'answer';
  let received = 0;

  // A name that owns no records but has descendants is an empty non-terminal: NOERROR, not NXDOMAIN (RFC 8020).
  const exists = (name: string): boolean => {
    if (zones.has(name)) return true;
    for (const known of zones.keys()) if (known === name || known.endsWith(`.${name}`)) return true;
    return false;
  };

  const handle: DnsHandler = (request, send) => {
    received++;
    if (mode === 'timeout') return;
    const response = Packet.createResponseFromRequest(request);
    response.header.aa = 1;
    const question = request.questions[0];
    if (mode === 'servfail' || question === undefined) {
      response.header.rcode = RCODE.SERVFAIL;
    } else {
      const name = normalise(question.name);
      const zone = zones.get(name);
      if (!exists(name)) response.header.rcode = RCODE.NXDOMAIN;
      const base = { name: question.name, class: Packet.CLASS.IN, ttl: TTL };
      if (question.type === Packet.TYPE.TXT) {
        // dns2 writes Buffers verbatim (its typings only admit strings), and would drop '' as a character-string.
        for (const data of zone?.txt ?? [])
          response.answers.push(Packet.createResourceFromQuestion(question, { ...base, type: Packet.TYPE.TXT, data: data as unknown as string[] }));
      } else if (question.type === Packet.TYPE.MX) {
        for (const mx of zone?.mx ?? []) response.answers.push(Packet.createResourceFromQuestion(question, { ...base, type: Packet.TYPE.MX, ...mx }));
      } else if (question.type === Packet.TYPE.A || question.type === Packet.TYPE.AAAA) {
        const wantV6 = question.type === Packet.TYPE.AAAA;
        for (const address of zone?.a ?? []) {
          if (isIPv6(address) === wantV6) response.answers.push(Packet.createResourceFromQuestion(question, { ...base, type: question.type, address }));
        }
      }
    }
    // A client that gave up has nowhere to receive the answer; that is not the test's failure.
    send(response).catch(() => undefined);
  };

  const { udp, tcp, port } = await bindBoth(handle);
  const connections = new Set<Socket>();
  tcp.on('connection', (socket: Socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });

  const zoneAt = (name: string): Zone => {
    const key = normalise(name);
    let zone = zones.get(key);
    if (zone === undefined) zones.set(key, (zone = {}));
    return zone;
  };

  let stopping: Promise<void> | undefined;
  const server: TestDnsServer = {
    address: `127.0.0.1:${port}`,
    port,
    setTxt: (name, records) => {
      zoneAt(name).txt = records.map((r) => (typeof r === 'string' ? characterStrings(r) : r.map(explicitString)));
    },
    setMx: (name, records) => {
      zoneAt(name).mx = records.map((r) => ({ ...r }));
    },
    setA: (name, addresses) => {
      zoneAt(name).a = [...addresses];
    },
    remove: (name, type) => {
      const key = normalise(name);
      const zone = zones.get(key);
      if (zone === undefined) return;
      if (type === undefined) {
        zones.delete(key);
        return;
      }
      delete zone[type === 'TXT' ? 'txt' : type === 'MX' ? 'mx' : 'a'];
      if (zone.txt === undefined && zone.mx === undefined && zone.a === undefined) zones.delete(key);
    },
    setMode: (next) => {
      mode = next;
    },
    queries: () => received,
    stop: () => {
      stopping ??= (async () => {
        // c-ares keeps its TCP connections open, and dns2 holds idle ones for 10 s: close would wait for them.
        for (const socket of connections) socket.destroy();
        await Promise.all([new Promise<void>((resolve) => udp.close(() => resolve())), new Promise<void>((resolve) => tcp.close(() => resolve()))]);
      })();
      return stopping;
    },
  };
  t?.teardown(() => server.stop());
  return server;
}

/** UDP on an ephemeral port, then TCP on the same number: retried, because that TCP port may be taken. */
async function bindBoth(handle: DnsHandler): Promise<{ udp: UDPServer; tcp: TCPServer; port: number }> {
  for (let attempt = 1; attempt <= BIND_ATTEMPTS; attempt++) {
    const udp = createUDPServer(handle);
    await udp.listen(0, '127.0.0.1');
    const port = udp.address().port;
    const tcp = createTCPServer(handle);
    const bound = await new Promise<boolean>((resolve) => {
      tcp.once('error', () => resolve(false));
      tcp.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (bound) return { udp, tcp, port };
    await new Promise<void>((resolve) => udp.close(() => resolve()));
  }
  throw new Error(`could not bind UDP and TCP on one port in ${BIND_ATTEMPTS} attempts`);
}
