// Starts an smtp-server listener and reports the port it got, failing (instead of throwing later) when the port is taken; the failure names the port's
// variable.
import type { SMTPServer } from 'smtp-server';
import { listenFailure, type PortVariable } from '../../shared/kernel/operational-errors.js';

export function listen(server: SMTPServer, port: number, host: string, variable: PortVariable): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => reject(listenFailure(variable, port, host, err));
    server.server.once('error', onError);
    server.listen(port, host, () => {
      server.server.off('error', onError);
      resolve((server.server.address() as { port: number }).port);
    });
  });
}
