import { createServer, type Server, type Socket } from 'node:net';
import type { Logger } from '../core/logger.js';
import type { MessageIntake } from '../core/message-intake.js';
import type { ServerCertificates } from '../core/tls.js';
import type { ImapServices } from './services.js';
import { copyCommands } from './commands-copy.js';
import { folderCommands } from './commands-folders.js';
import { messageCommands } from './commands-message.js';
import { selectCommands } from './commands-select.js';
import { sessionCommands } from './commands-session.js';
import { ImapConnection } from './connection.js';
import type { CommandSpec } from './session.js';
import { acceptTls } from './tls.js';

export interface ImapOptions {
  /** Where an APPEND's message goes as it arrives: memory under the budget shared with SMTP, or the spool. */
  intake: MessageIntake;
  allowInsecureAuth: boolean;
  /** Cap on one line and on one literal; a command is capped at four times this. */
  maxLineBytes: number;
  /** Concurrent connections; past it a new one gets BYE at once and is closed. */
  maxClients: number;
  /** The largest message an APPEND may store (RFC 7889 APPENDLIMIT). */
  maxAppendBytes: number;
  /** Connections with no command for this long are closed (RFC 3501 5.4: at least 30 minutes). */
  idleTimeoutMs?: number;
  /** With certificates the plain port offers STARTTLS; without, no TLS at all. */
  certificates: ServerCertificates | null;
  /** The implicit-TLS port (RFC 8314 section 3.3): the handshake comes first. Needs certificates. */
  implicitTls?: boolean;
}

const COMMANDS: ReadonlyMap<string, CommandSpec> = new Map(
  Object.entries({
    ...sessionCommands,
    ...folderCommands,
    ...selectCommands,
    ...messageCommands,
    ...copyCommands,
  }),
);
const AUTOLOGOUT_MS = 30 * 60 * 1000;

export interface ImapServer {
  server: Server;
  /** Ends every open connection and stops listening. */
  close(): Promise<void>;
}

/** The IMAP4rev1 listener (RFC 3501): one session per connection, commands run in order. */
export const createImapServer = (services: ImapServices, logger: Logger, options: ImapOptions): ImapServer => {
  const connections = new Set<ImapConnection>();
  const handshakes = new Set<Socket>();
  const open = (socket: Socket, secure: boolean) => {
    const connection = new ImapConnection(socket, services, logger, COMMANDS, {
      intake: options.intake,
      allowInsecureAuth: options.allowInsecureAuth,
      maxLineBytes: options.maxLineBytes,
      maxAppendBytes: options.maxAppendBytes,
      idleTimeoutMs: options.idleTimeoutMs ?? AUTOLOGOUT_MS,
      certificates: options.certificates,
      secure,
    });
    connections.add(connection);
    socket.once('close', () => connections.delete(connection));
  };
  // Nagle's algorithm would hold a response's last small write (the tagged OK after a
  // SEARCH or FETCH written in an earlier turn) until the client's delayed ACK, about 40 ms.
  // Each response is corked into few writes already (connection.ts), so no tiny packets.
  const server = createServer({ noDelay: true }, (socket) => {
    // RFC 3501 section 7.1.5: BYE as the greeting refuses the connection. Before a TLS
    // handshake nothing can be said, so the implicit-TLS port just closes.
    if (connections.size + handshakes.size >= options.maxClients) {
      socket.on('error', () => socket.destroy());
      if (options.implicitTls) socket.destroy();
      else socket.end('* BYE Too many connections, try again later\r\n');
      return;
    }
    const certificates = options.implicitTls ? options.certificates : null;
    if (!certificates) return open(socket, false);
    handshakes.add(socket);
    acceptTls(socket, certificates)
      .then(
        (secure) => open(secure, true),
        (error: unknown) => logger.info('imap TLS handshake failed', { error: (error as Error).message }),
      )
      .finally(() => handshakes.delete(socket));
  });
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const socket of handshakes) socket.destroy();
      for (const connection of connections) connection.shutdown();
      setTimeout(() => connections.forEach((connection) => connection.destroy()), 1000).unref();
    });
  return { server, close };
};
