import type { Socket } from 'node:net';
import type { Logger } from '../core/logger.js';
import type { ServerCertificates } from '../core/tls.js';
import type { ImapServices } from './services.js';
import { capabilitiesFor } from './commands-session.js';
import type { Chunk } from './format.js';
import type { MessageIntake } from '../core/message-intake.js';
import type { DetachedLiterals } from './parser.js';
import { CommandReader, releaseAll } from './reader.js';
import { ImapSession, plaintextLoginAllowed, type CommandSpec, type Output } from './session.js';
import { acceptTls } from './tls.js';

export interface ConnectionOptions {
  /** Where an APPEND's message goes as it arrives: memory under the budget shared with SMTP, or the spool. */
  intake: MessageIntake;
  allowInsecureAuth: boolean;
  maxLineBytes: number;
  /** The largest message an APPEND may store (RFC 7889 APPENDLIMIT). */
  maxAppendBytes: number;
  idleTimeoutMs: number;
  /** With certificates (and a default pair among them) a connection in the clear offers STARTTLS. */
  certificates: ServerCertificates | null;
  /** The socket is already encrypted (the implicit-TLS port). */
  secure: boolean;
}

/**
 * One IMAP connection: frames the socket's bytes into commands and runs them in order on
 * its session. STARTTLS swaps the socket for its TLS wrap; anything the client sent in the
 * clear after the command is thrown away (RFC 3501 section 6.2.1, the STARTTLS command
 * injection of CVE-2011-0411), since only bytes read through TLS may become commands.
 */
export class ImapConnection implements Output {
  readonly session: ImapSession;
  private socket: Socket;
  private queue: Promise<void>;
  /** Commands framed before a STARTTLS belong to an older generation and are dropped. */
  private generation = 0;
  private detach: () => void = () => {};

  constructor(
    socket: Socket,
    services: ImapServices,
    private readonly logger: Logger,
    commands: ReadonlyMap<string, CommandSpec>,
    private readonly options: ConnectionOptions,
  ) {
    this.socket = socket;
    this.session = new ImapSession(
      services,
      logger,
      this,
      {
        plaintextLoginAllowed: plaintextLoginAllowed(socket.remoteAddress, options.secure, options.allowInsecureAuth),
        startTlsOffered: !options.secure && options.certificates?.available() === true,
      },
      commands,
      capabilitiesFor(options.maxAppendBytes),
    );
    this.listen(socket);
    this.queue = this.session.greet();
  }

  async write(chunks: readonly Chunk[]): Promise<void> {
    const socket = this.socket;
    if (socket.destroyed || !socket.writable) return;
    socket.cork();
    let ok = true;
    for (const chunk of chunks) ok = socket.write(chunk) && ok;
    socket.uncork();
    if (!ok)
      await new Promise<void>((resolve) => {
        const done = () => {
          socket.off('drain', done);
          socket.off('close', done);
          resolve();
        };
        socket.once('drain', done);
        socket.once('close', done);
      });
  }

  end(): void {
    this.socket.end();
  }

  /** After the tagged OK to STARTTLS: the handshake on this socket. False when it failed (the connection is gone). */
  async startTls(): Promise<boolean> {
    const certificates = this.options.certificates;
    if (!certificates) return false;
    this.generation += 1;
    this.detach();
    try {
      this.socket = await acceptTls(this.socket, certificates);
    } catch (error) {
      this.logger.info('imap STARTTLS handshake failed', { error: (error as Error).message });
      return false;
    }
    this.listen(this.socket);
    return true;
  }

  /** Server shutdown: a BYE through whatever the socket is now, then the end. */
  shutdown(): void {
    this.socket.end('* BYE agentpost shutting down\r\n');
  }

  destroy(): void {
    this.socket.destroy();
  }

  private listen(socket: Socket): void {
    const { maxLineBytes, maxAppendBytes } = this.options;
    const reader = new CommandReader(
      { maxLineBytes, maxCommandBytes: maxLineBytes * 4, maxAppendBytes },
      {
        command: (frame, detached) => this.command(frame, detached),
        continueLiteral: () => this.enqueue(() => this.session.line('+ ready for literal data')),
        rejectLiteral: (tag, response) => this.enqueue(() => this.session.line(`${tag} ${response}`)),
        fatal: (message) => this.enqueue(() => this.session.bye(message)),
        // Before LOGIN no APPEND runs, so its message is not read (nor held, nor spooled).
        openMessage: (bytes) => (this.session.identity ? this.options.intake.open(bytes) : null),
      },
    );
    const onData = (chunk: Buffer) => {
      reader.push(chunk);
      // The spool takes a message no faster than the disk: the client waits meanwhile.
      const backlog = reader.backlog();
      if (!backlog) return;
      socket.pause();
      void backlog.then(() => socket.resume());
    };
    const onTimeout = () => this.enqueue(() => this.session.bye('autologout: idle for too long'));
    const onError = () => socket.destroy();
    const onClose = () => {
      reader.close();
      this.session.close();
    };
    socket.setTimeout(this.options.idleTimeoutMs);
    socket.on('data', onData);
    socket.on('timeout', onTimeout);
    socket.on('error', onError);
    socket.on('close', onClose);
    this.detach = () => {
      socket.setTimeout(0);
      socket.off('data', onData);
      socket.off('timeout', onTimeout);
      socket.off('close', onClose);
    };
  }

  /** Runs a command in its turn; its messages are given back when it ends, whether it ran, took them or not. */
  private command(frame: Buffer, detached: DetachedLiterals): void {
    this.enqueue(
      () => this.session.handle(frame, detached),
      () => releaseAll(detached),
    );
  }

  /** `settle` runs once the work is done, failed, or dropped with its generation. */
  private enqueue(work: () => Promise<void>, settle?: () => void): void {
    const generation = this.generation;
    this.queue = this.queue
      .then(() => (generation === this.generation ? work() : undefined))
      .catch((error: unknown) => {
        this.logger.error('imap connection failed', { error: error instanceof Error ? error.message : String(error) });
        this.socket.destroy();
      })
      .then(settle);
  }
}
