// Counts an SMTP listener's sessions (opened, open now) for the process's metrics: one TCP connection is one session.
import type { SMTPServer } from 'smtp-server';
import type { Metrics, SmtpServerKind } from '../../shared/operations/metrics/metrics.js';

/**
 * Counted at the socket, before any SMTP is spoken, so a client dropped by the pregreet test or a
 * failed TLS handshake counts too: the figure is the load the listener takes, not the mail it accepts.
 */
export function countSessions(server: SMTPServer, metrics: Metrics | undefined, kind: SmtpServerKind): void {
  if (!metrics) return;
  const opened = metrics.smtpSessions.labels(kind);
  const open = metrics.smtpSessionsOpen.labels(kind);
  server.server.on('connection', (socket: NodeJS.EventEmitter) => {
    opened.inc();
    open.inc();
    socket.once('close', () => open.dec());
  });
}
