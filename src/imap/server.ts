import { createServer, type Server, type Socket } from 'node:net';
import type { Logger } from '../core/logger.js';
import type { Services } from '../services/index.js';
import { mailboxCommands } from './commands-mailbox.js';
import { messageCommands } from './commands-message.js';
import { capabilitiesOf, sessionCommands } from './commands-session.js';
import type { Chunk } from './format.js';
import { CommandReader } from './reader.js';
import { ImapSession, plaintextLoginAllowed, type CommandSpec, type Output } from './session.js';

export interface ImapOptions {
  allowInsecureAuth: boolean;
  /** Cap on one line and on one literal; a command is capped at four times this. */
  maxLineBytes: number;
  /** Concurrent connections; past it a new one gets BYE at once and is closed. */
  maxClients: number;
  /** Connections with no command for this long are closed (RFC 3501 5.4: at least 30 minutes). */
  idleTimeoutMs?: number;
}

const COMMANDS: ReadonlyMap<string, CommandSpec> = new Map(Object.entries({ ...sessionCommands, ...mailboxCommands, ...messageCommands }));
const AUTOLOGOUT_MS = 30 * 60 * 1000;

export interface ImapServer {
  server: Server;
  /** Ends every open connection and stops listening. */
  close(): Promise<void>;
}

/** The IMAP4rev1 listener (RFC 3501): one session per connection, commands run in order. */
export const createImapServer = (services: Services, logger: Logger, options: ImapOptions): ImapServer => {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    // RFC 3501 section 7.1.5: BYE as the greeting refuses the connection.
    if (sockets.size >= options.maxClients) {
      socket.on('error', () => socket.destroy());
      socket.end('* BYE Too many connections, try again later\r\n');
      return;
    }
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    serveConnection(socket, services, logger, options);
  });
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const socket of sockets) socket.end('* BYE agentpost shutting down\r\n');
      setTimeout(() => sockets.forEach((socket) => socket.destroy()), 1000).unref();
    });
  return { server, close };
};

const serveConnection = (socket: Socket, services: Services, logger: Logger, options: ImapOptions): void => {
  socket.setTimeout(options.idleTimeoutMs ?? AUTOLOGOUT_MS);
  const output = socketOutput(socket);
  const session = new ImapSession(services, logger, output, {
    plaintextLoginAllowed: plaintextLoginAllowed(socket.remoteAddress, false, options.allowInsecureAuth),
  }, COMMANDS, capabilitiesOf);
  let queue: Promise<void> = session.greet();
  const enqueue = (work: () => Promise<void>) => {
    queue = queue.then(work).catch((error: unknown) => {
      logger.error('imap connection failed', { error: error instanceof Error ? error.message : String(error) });
      socket.destroy();
    });
  };
  const reader = new CommandReader(options.maxLineBytes, options.maxLineBytes * 4, {
    command: (frame) => enqueue(() => session.handle(frame)),
    continueLiteral: () => enqueue(() => session.line('+ ready for literal data')),
    rejectLiteral: (tag, message) => enqueue(() => session.line(`${tag} BAD ${message}`)),
    fatal: (message) => enqueue(() => session.bye(message)),
  });
  socket.on('data', (chunk: Buffer) => reader.push(chunk));
  socket.on('timeout', () => enqueue(() => session.bye('autologout: idle for too long')));
  socket.on('error', () => socket.destroy());
  socket.on('close', () => session.close());
};

const socketOutput = (socket: Socket): Output => ({
  async write(chunks: readonly Chunk[]) {
    if (socket.destroyed || !socket.writable) return;
    socket.cork();
    let ok = true;
    for (const chunk of chunks) ok = socket.write(chunk) && ok;
    socket.uncork();
    if (!ok) await new Promise<void>((resolve) => {
      const done = () => { socket.off('drain', done); socket.off('close', done); resolve(); };
      socket.once('drain', done);
      socket.once('close', done);
    });
  },
  end() {
    socket.end();
  },
});
