import { connect, type Socket } from 'node:net';

/**
 * `count` IMAP sessions that log in, select INBOX and IDLE (RFC 2177), as a mail client does
 * all day, spread over `accounts`. Opened 50 at a time. `close()` ends them all.
 */
export const holdIdleImap = async (port: number, count: number, accounts: { email: string; apiKey: string }[]): Promise<{ close(): void }> => {
  const sockets: Socket[] = [];
  for (let i = 0; i < count; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, count - i) }, async (_, j) => {
        const account = accounts[(i + j) % accounts.length];
        sockets.push(await idleSession(port, account.email, account.apiKey));
      }),
    );
  }
  return { close: () => sockets.forEach((socket) => socket.destroy()) };
};

/** Resolves once the server has answered `+` to IDLE. */
const idleSession = (port: number, user: string, password: string): Promise<Socket> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.setEncoding('latin1');
    // Each step: what ends the server's answer to the previous line, then the next line to send.
    const steps: [RegExp, string | null][] = [
      [/^\* OK /m, `a LOGIN "${user}" "${password}"\r\n`],
      [/^a OK /m, 'b SELECT INBOX\r\n'],
      [/^b OK /m, 'c IDLE\r\n'],
      [/^\+ /m, null],
    ];
    let buffer = '';
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      const [done, next] = steps[0] ?? [];
      if (!done?.test(buffer)) return;
      if (/^[abc] (NO|BAD) /m.test(buffer)) return reject(new Error(`imap: ${buffer.trim()}`));
      steps.shift();
      buffer = '';
      if (next) socket.write(next);
      else resolve(socket);
    });
    socket.once('error', reject);
  });
