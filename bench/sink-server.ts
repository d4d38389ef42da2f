/**
 * The bare SMTP sink of bench:ingest, run as its own process: smtp-server with the MX's
 * listener options (no pause), reading each message fully and storing nothing. Prints its
 * port on stdout.
 */
import { SMTPServer } from 'smtp-server';
import { listenerOptions } from '../src/smtp/listener-options.js';

const server = new SMTPServer({
  ...listenerOptions({ hostname: 'sink.bench.test', maxMessageBytes: 25 * 1024 * 1024, maxClients: 5000, greetingDelayMs: 0 }),
  authOptional: true,
  disabledCommands: ['AUTH', 'STARTTLS'],
  onRcptTo: (_address, _session, callback) => callback(),
  onData: (stream, _session, callback) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => {
      Buffer.concat(chunks);
      callback(null, 'Ok');
    });
  },
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.server.address() as { port: number }).port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
