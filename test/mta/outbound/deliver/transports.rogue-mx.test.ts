// The SMTP delivery client against misbehaving MX servers on 127.0.0.1: a refusing or garbage greeting, a reply cut mid-line, a close during STARTTLS, a
// server dripping one byte a second, a 10 MB reply line; each ends as an outcome within the delivery's deadline, and the process lives on.
import pino from 'pino';
import t from 'tap';
import { Transports } from '../../../../mta/outbound/deliver/transports.js';
import { loadConfig } from '../../../../shared/config/index.js';
import { startRogueServer, type RogueScript } from '../../../helpers/rogue-server.js';

const config = loadConfig({});
const RAW = Buffer.from('From: a@sender.example\r\nTo: b@rcpt.example\r\nSubject: hi\r\n\r\nhello\r\n');

/** Greets and answers EHLO offering STARTTLS; `onStartTls` decides what happens next. */
const offeringStartTls = (onStartTls: RogueScript['command']): RogueScript => {
  let upgrading = false;
  return {
    greet: (s) => s.write('220 rogue.example ESMTP\r\n'),
    command(line, s, c) {
      if (upgrading) return; // the client's TLS bytes, not commands
      if (/^EHLO /i.test(line)) s.write('250-rogue.example\r\n250 STARTTLS\r\n');
      else if (/^STARTTLS/i.test(line)) (upgrading = true), onStartTls!(line, s, c);
      else s.write('502 no\r\n');
    },
  };
};

const cases: { name: string; script: RogueScript; outcome: RegExp }[] = [
  { name: 'a 554 greeting', script: { greet: (s) => s.write('554 go away\r\n') }, outcome: /^reply 554 (554 )?go away/ },
  { name: 'a garbage greeting', script: { greet: (s) => s.write('SSH-2.0-OpenSSH_9.6\r\n') }, outcome: /^network|^reply/ },
  { name: 'a greeting cut mid-line, then close', script: { greet: (s) => s.end('220 rogue.exa') }, outcome: /^network .*(closed|ECONNECTION)/i },
  {
    name: 'a close during the STARTTLS handshake',
    script: offeringStartTls((_l, s) => (s.write('220 go ahead\r\n'), s.once('data', () => s.destroy()))),
    outcome: /^network /,
  },
  {
    name: 'a greeting dripping one byte a second',
    script: { greet: (s, c) => c.drip(s, `220 ${'slow '.repeat(200)}\r\n`, 1000) },
    outcome: /^network gave up waiting/,
  },
  {
    name: 'a 10 MB greeting line',
    script: { greet: (s, c) => c.flood(s, '220 ', 10 * 1024 * 1024, '\r\n') },
    outcome: /^network .*exceeds maximum allowed size/,
  },
];

t.test('misbehaving MX servers: each delivery ends as an outcome within its deadline, and the process lives on', async (t) => {
  const transports = new Transports(config, pino({ level: 'silent' }));
  t.teardown(() => transports.close());
  for (const rogue of cases) {
    const server = await startRogueServer(t, rogue.script);
    // The deadline the delivery worker gives each attempt; a trickling server is cut off at it.
    const sent = await transports.send(
      { host: 'rogue.example', address: '127.0.0.1', port: server.port },
      { from: 'a@sender.example', to: 'b@rcpt.example' },
      RAW,
      AbortSignal.timeout(2000),
    );
    const text = sent.outcome.kind === 'reply' ? `reply ${sent.outcome.code} ${sent.outcome.text}` : `${sent.outcome.kind} ${sent.outcome.text}`;
    t.match(text, rogue.outcome, `${rogue.name}: ${text.slice(0, 160)}`);
  }
  t.pass('the process is still here: no error went unheard');
});
