import { connect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { PortProbe } from '../core/doctor.js';

/**
 * Connects and reads the first line the server sends (SMTP `220 ...`, IMAP `* OK ...`), then
 * closes with nothing sent: enough to know something answers there, and what. On an
 * implicit-TLS port the handshake comes first and the close is a proper one (close_notify,
 * then FIN), so the server sees a client that left, not a failed handshake to log. The
 * certificate is not judged here (the certificate check reads the files); any is accepted.
 */
export const tcpGreetingProbe: PortProbe = {
  greeting: ({ host, port, tls }, timeoutMs, expectGreeting = true) =>
    new Promise((resolve) => {
      const socket: Socket = tls ? tlsConnect({ host, port, servername: tls.servername, rejectUnauthorized: false }) : connect({ host, port });
      let received = '';
      let done = false;
      const finish = (result: Awaited<ReturnType<PortProbe['greeting']>>) => {
        if (done) return;
        done = true;
        resolve(result);
        if (!tls || !result.ok) return void socket.destroy();
        socket.end();
        setTimeout(() => socket.destroy(), timeoutMs).unref();
      };
      socket.setTimeout(timeoutMs, () => finish({ ok: false, error: `no greeting within ${timeoutMs} ms` }));
      if (!expectGreeting) socket.once(tls ? 'secureConnect' : 'connect', () => finish({ ok: true, line: '' }));
      socket.on('error', (error: NodeJS.ErrnoException) => finish({ ok: false, error: error.code ?? error.message }));
      socket.on('data', (chunk: Buffer) => {
        received += chunk.toString('latin1');
        const end = received.indexOf('\n');
        if (end >= 0) finish({ ok: true, line: received.slice(0, end).trim() });
      });
      socket.on('end', () => finish({ ok: false, error: 'closed without a greeting' }));
    }),
};
