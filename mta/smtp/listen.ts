// Starts an smtp-server listener and reports the port it got, failing (instead of throwing later) when the port is taken.
import type { SMTPServer } from 'smtp-server';

export function listen(server: SMTPServer, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.server.once('error', onError);
    server.listen(port, host, () => {
      server.server.off('error', onError);
      resolve((server.server.address() as { port: number }).port);
    });
  });
}
