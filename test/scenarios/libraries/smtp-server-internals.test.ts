// Compatibility of the smtp-server internals mta/inbound/connection-hooks.ts and mta/smtp/protocol-replies.ts rely on: one test per internal, against the
// pinned library on a real loopback server, so an upgrade that changes one fails here by name.
import { createHash } from 'node:crypto';
import t from 'tap';
import { SMTPServer, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server';
// Without .js: the package's exports map sends lib/<name>.js to dist/esm/<name>.js.js under some resolvers (both patterns match).
import { SMTPConnection } from 'smtp-server/lib/smtp-connection';
import { RawSmtpClient } from '../../helpers/smtp-client.js';

/** Read when a check fails: what the upgrade must re-check. */
const WHERE = 'see mta/inbound/connection-hooks.ts and the section "Upgrading the libraries used below their API" of docs/architecture.md';
const PROTOCOL = 'see mta/smtp/protocol-replies.ts and the section "Upgrading the libraries used below their API" of docs/architecture.md';

type Options = Omit<SMTPServerOptions, 'onConnect'>;

/** A plain SMTP server on a loopback port, closed with the test; `seen` collects the connections it makes. */
async function server(tt: { teardown(fn: () => unknown): void }, options: Options = {}) {
  const smtp = new SMTPServer({ authOptional: true, disabledCommands: ['AUTH', 'STARTTLS'], logger: false, ...options });
  const seen: SMTPConnection[] = [];
  onConnection(smtp, (c) => seen.push(c));
  const port = await new Promise<number>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve((smtp.server.address() as { port: number }).port)));
  tt.teardown(() => new Promise<void>((resolve) => smtp.close(() => resolve())));
  return { smtp, seen, port };
}

/** Runs `instrument` on each new connection of `smtp` as attachConnectionHooks does: in connections.add, before init(). */
function onConnection(smtp: SMTPServer, instrument: (c: SMTPConnection) => void): void {
  const connections = smtp.connections as Set<SMTPConnection>;
  const add = connections.add.bind(connections);
  connections.add = (c: SMTPConnection) => {
    instrument(c);
    return add(c);
  };
}

async function open(tt: { teardown(fn: () => unknown): void }, port: number) {
  const opened = await RawSmtpClient.open(port);
  tt.teardown(() => opened.client.destroy());
  return opened;
}

/** A method's source without white space, hashed: a method we copy must not change under us. */
const fingerprint = (fn: (...args: never[]) => unknown) => createHash('sha256').update(fn.toString().replace(/\s+/g, '')).digest('hex').slice(0, 16);

t.test('SMTPServer#connections: every connection is added to the set before its init() runs (attachConnectionHooks instruments it there)', async (t) => {
  const s = await server(t);
  const order: string[] = [];
  onConnection(s.smtp, (c) => {
    order.push('add');
    const init = c.init.bind(c);
    c.init = () => {
      order.push('init');
      init();
    };
  });
  await open(t, s.port);
  t.same(order, ['add', 'init'], WHERE);
});

t.test('SMTPConnection#init(): unchanged since we copied it (listeners, maxClients check, connectionReady after a fixed delay)', async (t) => {
  const source = SMTPConnection.prototype.init.toString();
  for (const call of ['_setListeners', 'maxClients', 'connections.size', 'connectionReady', 'Too many connected clients']) {
    t.ok(source.includes(call), `init() still uses ${call}: ${WHERE}`);
  }
  t.equal(fingerprint(SMTPConnection.prototype.init), '2036f072df5eeed3', `SMTPConnection#init changed: compare it with instrument()'s copy, ${WHERE}`);
});

t.test('SMTPConnection#_setListeners(callback): sets the socket up and calls back once, before any greeting', async (t) => {
  const s = await server(t);
  t.type(SMTPConnection.prototype._setListeners, 'function', WHERE);
  let calledBack = 0;
  onConnection(s.smtp, (c) => {
    const setListeners = c._setListeners.bind(c);
    c._setListeners = (callback: () => void) =>
      setListeners(() => {
        calledBack++;
        callback();
      });
  });
  const { greeting } = await open(t, s.port);
  t.equal(greeting.code, 220);
  t.equal(calledBack, 1, WHERE);
});

t.test('SMTPConnection#connectionReady() sends the 220 greeting; #send(code, text, false) writes one reply; #name is the server name', async (t) => {
  const s = await server(t, { name: 'compat.example' });
  onConnection(s.smtp, (c) => {
    c.init = () => c._setListeners(() => c.connectionReady());
  });
  const { client, greeting } = await open(t, s.port);
  t.equal(greeting.code, 220, `connectionReady greets: ${WHERE}`);
  const c = s.seen[0]!;
  t.equal(c.name, 'compat.example', WHERE);
  c.send(421, 'compat closing', false);
  t.match(await client.read(), { code: 421, text: 'compat closing' }, WHERE);
});

t.test(
  'SMTPConnection#_sendGreeting() writes the 220 once, after onConnect; #remoteAddress; a data listener prepended on #_socket sees bytes before the parser',
  async (t) => {
    const order: string[] = [];
    const s = await server(t);
    s.smtp.onConnect = (_session, callback) => {
      order.push('onConnect');
      callback();
    };
    onConnection(s.smtp, (c) => {
      t.type(c._sendGreeting, 'function', WHERE);
      const greet = c._sendGreeting.bind(c);
      c._sendGreeting = () => {
        order.push('greeting');
        greet();
      };
      c.init = () =>
        c._setListeners(() => {
          c._socket.prependListener('data', () => order.push('data'));
          c.connectionReady();
        });
      const parse = c._onCommand.bind(c);
      c._onCommand = (command: Buffer, callback?: () => void) => {
        order.push('command');
        return parse(command, callback);
      };
    });
    const { client, greeting } = await open(t, s.port);
    t.equal(greeting.code, 220, `_sendGreeting greets: ${WHERE}`);
    t.equal(s.seen[0]!.remoteAddress, '127.0.0.1', WHERE);
    t.match(await client.command('NOOP'), { code: 250 });
    t.same(order, ['onConnect', 'greeting', 'data', 'command'], `the greeting after onConnect, our data listener before the parser: ${WHERE}`);
  },
);

t.test('SMTPConnection#handler_EHLO and #handler_HELO(command, callback): answer the greeting command and call back', async (t) => {
  const s = await server(t);
  const calls: string[] = [];
  onConnection(s.smtp, (c) => {
    for (const command of ['EHLO', 'HELO'] as const) {
      const original = c[`handler_${command}`].bind(c);
      t.equal(original.length, 2, `handler_${command} takes (command, callback): ${WHERE}`);
      c[`handler_${command}`] = (line: Buffer, callback: () => void) => {
        calls.push(`${command} ${line.toString().trim()}`);
        original(line, callback);
      };
    }
  });
  const { client } = await open(t, s.port);
  t.match(await client.command('EHLO client.example'), { code: 250 });
  t.match(await client.command('HELO client.example'), { code: 250 });
  t.same(calls, ['EHLO EHLO client.example', 'HELO HELO client.example'], WHERE);
});

t.test('SMTPConnection#handler_RCPT(command, callback): strips a source route and calls onRcptTo within the same call', async (t) => {
  let seenAddress = '';
  let inside = false;
  let calledInside: boolean | undefined;
  const s = await server(t, {
    onRcptTo(address, _session, callback) {
      seenAddress = address.address;
      calledInside = inside;
      callback();
    },
  });
  onConnection(s.smtp, (c) => {
    const rcpt = c.handler_RCPT.bind(c);
    c.handler_RCPT = (line: Buffer, callback: () => void) => {
      inside = true;
      try {
        rcpt(line, callback);
      } finally {
        inside = false;
      }
    };
  });
  const { client } = await open(t, s.port);
  await client.command('EHLO client.example');
  await client.command('MAIL FROM:<a@client.example>');
  t.match(await client.command('RCPT TO:<@relay.example:b@dest.example>'), { code: 250 });
  t.equal(seenAddress, 'b@dest.example', `the library strips the source route: ${WHERE}`);
  t.equal(calledInside, true, `onRcptTo runs synchronously inside handler_RCPT (sourceRouteOf reads a WeakMap set around it): ${WHERE}`);
});

t.test('SMTPConnection#_validateMailParams(parsed): refuses a SIZE= over the limit itself, accepts it without SIZE', async (t) => {
  const s = await server(t, { size: 1000 });
  const { client } = await open(t, s.port);
  await client.command('EHLO client.example');
  const c = s.seen[0]!;
  t.type(c._validateMailParams, 'function', WHERE);
  const over = c._validateMailParams({ address: 'a@client.example', args: { SIZE: '5000' } });
  t.ok(over, `an oversized SIZE= is refused by the library (so connection-hooks drops SIZE before it): ${WHERE}`);
  t.equal(c._validateMailParams({ address: 'a@client.example', args: {} }), null, WHERE);
  t.equal(c._validateMailParams({ address: 'a@client.example', args: { SIZE: '500' } }), null, WHERE);
});

t.test('SMTPConnection#_closing, #_closed, #_handlerPending, #_dataStream, #_parser._dataMode, #_socket: the state the session limit reads', async (t) => {
  let duringMail: Record<string, unknown> | undefined;
  let duringData: Record<string, unknown> | undefined;
  let connection: SMTPConnection | undefined;
  const state = (c: SMTPConnection) => ({
    closing: c._closing,
    closed: c._closed,
    handlerPending: c._handlerPending,
    dataStream: Boolean(c._dataStream),
    dataMode: c._parser ? c._parser._dataMode : undefined,
  });
  const s = await server(t, {
    onMailFrom(_address, _session, callback) {
      duringMail = state(connection!);
      callback();
    },
    onData(stream, _session, callback) {
      duringData = state(connection!);
      stream.on('data', () => {});
      stream.on('end', () => callback());
    },
  });
  const { client } = await open(t, s.port);
  connection = s.seen[0]!;
  t.ok(typeof connection._socket.once === 'function', `_socket is the client's socket: ${WHERE}`);
  t.match(state(connection), { closing: false, closed: false, handlerPending: false }, WHERE);
  await client.command('EHLO client.example');
  await client.command('MAIL FROM:<a@client.example>');
  t.match(duringMail, { handlerPending: true }, `_handlerPending while a handler runs: ${WHERE}`);
  await client.command('RCPT TO:<b@dest.example>');
  await client.command('DATA');
  t.match(await client.command('Subject: x\r\n\r\nbody\r\n.'), { code: 250 });
  t.match(duringData, { dataStream: true, dataMode: true }, `_dataStream and _parser._dataMode during DATA: ${WHERE}`);
  const closed = new Promise<void>((resolve) => connection!._socket.once('close', () => resolve()));
  await client.command('QUIT');
  await closed;
  t.equal(connection._closed || connection._closing, true, WHERE);
});

t.test("the session types we keep state under are the library's session objects (WeakMap keys live as long as the session)", async (t) => {
  let session: SMTPServerSession | undefined;
  const s = await server(t, {
    onMailFrom(_address, sess, callback) {
      session = sess;
      callback();
    },
  });
  const { client } = await open(t, s.port);
  await client.command('EHLO client.example');
  await client.command('MAIL FROM:<a@client.example>');
  t.equal(session, s.seen[0]!.session, `onMailFrom gets connection.session itself: ${WHERE}`);
});

t.test(
  'the SMTPConnection methods protocol-replies.ts wraps or relies on are unchanged (send, _onCommand, _getHandler, _getEnhancedStatusCode, handler_MAIL, ' +
    'handler_RCPT)',
  async (t) => {
    const pinned: Record<string, string> = {
      send: 'd98a1668aa7323e4',
      _onCommand: 'cba82a7fbac1c9e9',
      _getHandler: '53530e7aea10a579',
      _getEnhancedStatusCode: '47c803847813abf2',
      handler_MAIL: 'd430b50f693cd4e3',
      handler_RCPT: '75ede0fc2d41bf4a',
    };
    const prototype = SMTPConnection.prototype as unknown as Record<string, (...args: never[]) => unknown>;
    for (const [name, hash] of Object.entries(pinned)) {
      t.equal(fingerprint(prototype[name]!), hash, `SMTPConnection#${name} changed: re-check what the tests below pin of it, ${PROTOCOL}`);
    }
  },
);

t.test(
  'SMTPConnection#send(code, text, context): with ENHANCEDSTATUSCODES on, a code derived from the reply code alone goes first; context false sends ' +
    'the text as it is',
  async (t) => {
    const s = await server(t, { hideENHANCEDSTATUSCODES: false });
    const { client } = await open(t, s.port);
    const c = s.seen[0]!;
    c.send(550, 'derived');
    t.match(await client.read(), { code: 550, text: '5.1.1 derived' }, `550 is always 5.1.1: ${PROTOCOL}`);
    c.send(550, '5.7.1 ours');
    t.match(
      await client.read(),
      { code: 550, text: '5.1.1 5.7.1 ours' },
      `a code in the text is not seen (why protocol-replies sends such texts with false): ${PROTOCOL}`,
    );
    c.send(550, '5.7.1 ours', false);
    t.match(await client.read(), { code: 550, text: '5.7.1 ours' }, PROTOCOL);
    c.send(252, 'vrfy', 'VRFY');
    t.match(await client.read(), { code: 252, text: '2.1.5 vrfy' }, `the library's VRFY code (why protocol-replies answers VRFY itself): ${PROTOCOL}`);
  },
);

t.test('SMTPConnection#_onCommand: a command disabled for the session is answered send(500, text, <its name>)', async (t) => {
  const s = await server(t);
  const sent: Parameters<SMTPConnection['send']>[] = [];
  onConnection(s.smtp, (c) => {
    const send = c.send.bind(c);
    c.send = (...args: Parameters<SMTPConnection['send']>) => {
      sent.push(args);
      send(...args);
    };
  });
  s.smtp.onConnect = (session, callback) => {
    session.disabledCommands = ['AUTH', 'VRFY'];
    callback();
  };
  const { client } = await open(t, s.port);
  await client.command('EHLO client.example');
  t.match(await client.command(`AUTH PLAIN ${Buffer.from('\0u\0p').toString('base64')}`), { code: 500 });
  t.match(await client.command('VRFY someone'), { code: 500 });
  const unrecognized = (name: string) => [500, 'Error: command not recognized', name];
  t.same(sent.slice(-2), [unrecognized('AUTH'), unrecognized('VRFY')], `the 500 protocol-replies turns into 530 or 502 for AUTH: ${PROTOCOL}`);
});

t.test('SMTPConnection#_getHandler: a handler_<NAME> set on the connection itself is dispatched (protocol-replies adds EXPN, replaces VRFY)', async (t) => {
  const s = await server(t);
  onConnection(s.smtp, (c) => {
    Object.assign(c, {
      handler_EXPN(_line: Buffer, callback: () => void) {
        c.send(502, 'own EXPN', false);
        callback();
      },
    });
    c.handler_VRFY = (_line: Buffer, callback: () => void) => {
      c.send(252, 'own VRFY', false);
      callback();
    };
  });
  const { client } = await open(t, s.port);
  await client.command('EHLO client.example');
  t.match(await client.command('EXPN staff'), { code: 502, text: 'own EXPN' }, PROTOCOL);
  t.match(await client.command('VRFY someone'), { code: 252, text: 'own VRFY' }, PROTOCOL);
});

t.test(
  'SMTPConnection#handler_MAIL: it hands on U-label domains; an accepted MAIL is session.envelope.mailFrom with args.SMTPUTF8 true, a refused one leaves false',
  async (t) => {
    let handedOn = '';
    const s = await server(t, {
      onMailFrom(address, _session, callback) {
        handedOn = address.address;
        callback(address.address.startsWith('refused') ? Object.assign(new Error('no'), { responseCode: 550 }) : null);
      },
    });
    const { client } = await open(t, s.port);
    await client.command('EHLO client.example');
    const c = s.seen[0]!;
    t.match(await client.command('MAIL FROM:<refused@x.example> SMTPUTF8'), { code: 550 });
    t.equal(c.session.envelope.mailFrom, false, `a refused MAIL leaves no sender (RCPT reads its parameters there): ${PROTOCOL}`);
    t.match(await client.command('MAIL FROM:<a@xn--bcher-kva.example> SMTPUTF8'), { code: 250 });
    t.equal(handedOn, 'a@bücher.example', `the A-label domain is handed on in U-labels (why protocol-replies reads the client's line): ${PROTOCOL}`);
    t.match(c.session.envelope.mailFrom, { address: 'a@bücher.example', args: { SMTPUTF8: true } }, PROTOCOL);
  },
);
