import { connect } from 'node:net';
import type { PortProbe } from '../core/doctor.js';

/**
 * Connects and reads the first line the server sends (SMTP `220 ...`, IMAP `* OK ...`), then
 * closes with nothing sent: enough to know something answers there, and what.
 */
export const tcpGreetingProbe: PortProbe = {
  greeting: (host, port, timeoutMs, expectGreeting = true) =>
    new Promise((resolve) => {
      const socket = connect({ host, port });
      let received = '';
      const finish = (result: Awaited<ReturnType<PortProbe['greeting']>>) => {
        socket.destroy();
        resolve(result);
      };
      socket.setTimeout(timeoutMs, () => finish({ ok: false, error: `no greeting within ${timeoutMs} ms` }));
      if (!expectGreeting) socket.once('connect', () => finish({ ok: true, line: '' }));
      socket.on('error', (error: NodeJS.ErrnoException) => finish({ ok: false, error: error.code ?? error.message }));
      socket.on('data', (chunk: Buffer) => {
        received += chunk.toString('latin1');
        const end = received.indexOf('\n');
        if (end >= 0) finish({ ok: true, line: received.slice(0, end).trim() });
      });
      socket.on('end', () => finish({ ok: false, error: 'closed without a greeting' }));
    }),
};
