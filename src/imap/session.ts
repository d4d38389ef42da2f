import { isIP } from 'node:net';
import type { Logger } from '../core/logger.js';
import type { ImapIdentity } from '../services/imap/session.js';
import type { ImapServices } from './services.js';
import type { Chunk } from './format.js';
import { ParseError, parseCommand, type Command, type DetachedLiterals, type Token } from './parser.js';
import { oneLine, responseForError } from './replies.js';
import { reportChanges } from './report.js';
import type { SelectedView } from './view.js';

export type SessionState = 'not-authenticated' | 'authenticated' | 'selected' | 'logout';

export interface Output {
  /** Writes response bytes in order; resolves once the socket can take more. */
  write(chunks: readonly Chunk[]): Promise<void>;
  end(): void;
  /** The TLS handshake after STARTTLS's tagged OK; false when it failed and the connection is gone. */
  startTls(): Promise<boolean>;
}

export interface SessionOptions {
  /** False on a non-loopback connection without TLS unless imap.allowInsecureAuth. */
  plaintextLoginAllowed: boolean;
  /** A certificate is configured and the connection is not encrypted yet. */
  startTlsOffered: boolean;
}

/**
 * What a command returns: the tagged response after the tag, e.g. "OK FETCH completed", or
 * null when the command wrote its tagged response itself (STARTTLS answers before the handshake).
 */
export type Handler = (session: ImapSession, args: Token[], command: Command) => Promise<string | null> | string | null;

export interface CommandSpec {
  states: readonly SessionState[];
  run: Handler;
  /**
   * RFC 3501 section 7.4.1: no EXPUNGE while answering FETCH, STORE or SEARCH (by sequence
   * number; the client reads their numbers against the view it has).
   */
  holdExpunges?: boolean;
}

/** The state of one IMAP connection (RFC 3501 section 3) and the dispatch of its commands. */
export class ImapSession {
  state: SessionState = 'not-authenticated';
  identity: ImapIdentity | null = null;
  view: SelectedView | null = null;
  /** Extensions the client turned on (RFC 5161 ENABLE, and CONDSTORE's enabling commands). */
  readonly enabled = new Set<'CONDSTORE' | 'QRESYNC'>();
  private idle: { tag: string; unwatch: () => void } | null = null;
  private pendingSasl: ((line: string) => Promise<string>) | null = null;
  private pendingSaslTag = '';
  /** Reports run one at a time; a wake-up while one is queued adds nothing. */
  private reporting: Promise<void> = Promise.resolve();
  private reportQueued = false;

  constructor(
    readonly services: ImapServices,
    readonly logger: Logger,
    readonly output: Output,
    readonly options: SessionOptions,
    private readonly commands: ReadonlyMap<string, CommandSpec>,
    private readonly capabilities: (session: ImapSession) => string,
  ) {}

  greet(): Promise<void> {
    return this.line(`* OK [CAPABILITY ${this.capabilities(this)}] agentpost IMAP4rev1 ready`);
  }

  line(text: string): Promise<void> {
    return this.output.write([text, '\r\n']);
  }

  /** An untagged response: "* " + chunks + CRLF. */
  untagged(chunks: readonly Chunk[]): Promise<void> {
    return this.output.write(['* ', ...chunks, '\r\n']);
  }

  capabilityList(): string {
    return this.capabilities(this);
  }

  get condstore(): boolean {
    return this.enabled.has('CONDSTORE');
  }

  get qresync(): boolean {
    return this.enabled.has('QRESYNC');
  }

  /**
   * A CONDSTORE-enabling command (RFC 7162 section 3.1): from now on responses carry
   * mod-sequences; with a folder selected, its HIGHESTMODSEQ is sent once.
   */
  async enableCondstoreIf(condition: boolean): Promise<void> {
    if (condition) await this.enableCondstore();
  }

  /** True once the connection is ending (LOGOUT, BYE). */
  get closed(): boolean {
    return this.state === 'logout';
  }

  async enableCondstore(): Promise<void> {
    if (this.condstore) return;
    this.enabled.add('CONDSTORE');
    if (this.view) await this.untagged([`OK [HIGHESTMODSEQ ${this.view.folder.highestModseq}] mod-sequences are on`]);
  }

  /** The logged-in identity; commands that need it only run after LOGIN. */
  requireIdentity(): ImapIdentity {
    if (!this.identity) throw new ParseError('log in first');
    return this.identity;
  }

  requireView(): SelectedView {
    if (!this.view) throw new ParseError('select a folder first');
    return this.view;
  }

  /** STARTTLS succeeded: plaintext login is fine now, and STARTTLS is no longer offered. */
  secured(): void {
    this.options.startTlsOffered = false;
    this.options.plaintextLoginAllowed = true;
  }

  loggedIn(identity: ImapIdentity): void {
    this.identity = identity;
    this.state = 'authenticated';
  }

  select(view: SelectedView | null): void {
    this.view = view;
    this.state = view ? 'selected' : 'authenticated';
  }

  /** AUTHENTICATE: the next line the client sends is the SASL response (RFC 3501 6.2.2). */
  awaitSaslResponse(tag: string, onResponse: (line: string) => Promise<string>): void {
    this.pendingSaslTag = tag;
    this.pendingSasl = onResponse;
  }

  async handle(frame: Buffer, detached?: DetachedLiterals): Promise<void> {
    if (this.state === 'logout') return;
    if (this.pendingSasl) return this.finishSasl(frame);
    if (this.idle) return this.finishIdle(frame);
    let command: Command;
    try {
      command = parseCommand(frame, detached);
    } catch (error) {
      const tag = error instanceof ParseError && error.tag ? error.tag : '*';
      return this.line(`${tag} BAD ${oneLine((error as Error).message)}`);
    }
    await this.run(command);
  }

  private async run(command: Command): Promise<void> {
    const spec = this.commands.get(command.name);
    if (!spec) return this.line(`${command.tag} BAD unknown command ${command.name.slice(0, 30)}`);
    if (!spec.states.includes(this.state)) return this.line(`${command.tag} BAD ${command.name} is not allowed ${stateText(this.state)}`);
    // As SMTP submission does: the key must still work at each command (revoked, rotated away or expired ends the session).
    if (this.identity && !(await this.services.imap.stillValid(this.identity))) return this.bye('the key was revoked or expired');
    let result: string | null;
    try {
      result = await spec.run(this, command.args, command);
    } catch (error) {
      result = this.failure(command, error);
    }
    if (this.closed || result === null) return;
    if (!this.idle && !this.pendingSasl) {
      const present = await this.report(!spec.holdExpunges);
      if (this.closed) return;
      await this.line(`${command.tag} ${result}`);
      if (!present) await this.folderGone();
    }
  }

  /** The selected folder was deleted (here or elsewhere): the session cannot go on with its view. */
  private folderGone(): Promise<void> {
    return this.bye(`the selected folder ${this.view?.folder.name ?? ''} was deleted; log in again`);
  }

  private failure(command: Command, error: unknown): string {
    if (error instanceof ParseError) return `BAD ${oneLine(error.message)}`;
    const mapped = responseForError(error);
    if (mapped) return mapped;
    this.logger.error('imap command failed', { command: command.name, error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    return 'NO [SERVERBUG] internal error';
  }

  private async finishSasl(frame: Buffer): Promise<void> {
    const onResponse = this.pendingSasl as (line: string) => Promise<string>;
    const tag = this.pendingSaslTag;
    this.pendingSasl = null;
    let result: string;
    try {
      result = await onResponse(frame.toString('latin1').trim());
    } catch (error) {
      result = responseForError(error) ?? `BAD ${oneLine((error as Error).message)}`;
    }
    await this.line(`${tag} ${result}`);
  }

  /**
   * Tells the client what changed in its folder since it last heard (report.ts); one report
   * at a time. False when the selected folder is gone.
   */
  report(expunges = true): Promise<boolean> {
    const next = this.reporting
      .then(() => reportChanges(this, expunges))
      .catch((error: unknown) => {
        this.logger.warn('imap change report failed', { error: error instanceof Error ? error.message : String(error) });
        return true;
      });
    this.reporting = next.then(() => undefined);
    return next;
  }

  /** A report pushed while idling; a folder gone ends the session at once. */
  private async pushReport(): Promise<void> {
    if (!(await this.report())) await this.folderGone();
  }

  /**
   * IDLE (RFC 2177): changes are pushed while the client waits, until it sends DONE. The
   * store's after-commit feed tells the session of every change to its mailbox (mail stored,
   * expunged, flags, folders), and the look for other processes' commits
   * (src/app/foreign-commits.ts) of theirs.
   */
  async startIdle(tag: string): Promise<void> {
    const identity = this.requireIdentity();
    await this.line('+ idling');
    const unwatch = this.services.imap.watch(identity, (change) => {
      if (!this.view || (change.folder !== this.view.folder.name && change.kind !== 'folder') || this.reportQueued) return;
      this.reportQueued = true;
      setImmediate(() => {
        this.reportQueued = false;
        if (this.idle) void this.pushReport();
      });
    });
    this.idle = { tag, unwatch };
  }

  private async finishIdle(frame: Buffer): Promise<void> {
    const idle = this.idle as { tag: string; unwatch: () => void };
    if (frame.toString('latin1').trim().toUpperCase() !== 'DONE') return this.line('* BAD expected DONE to end IDLE');
    idle.unwatch();
    this.idle = null;
    const present = await this.report();
    if (this.closed) return;
    await this.line(`${idle.tag} OK IDLE terminated`);
    if (!present) await this.folderGone();
  }

  async bye(reason: string): Promise<void> {
    this.close();
    await this.line(`* BYE ${oneLine(reason)}`);
    this.output.end();
  }

  /** Stops watching; the connection is going away. */
  close(): void {
    this.state = 'logout';
    this.idle?.unwatch();
    this.idle = null;
  }
}

const stateText = (state: SessionState): string =>
  state === 'not-authenticated' ? 'before LOGIN' : state === 'authenticated' ? 'without a selected folder' : 'in this state';

/** RFC 3501 section 6.2: plaintext passwords only over loopback or TLS, unless configured. */
export const plaintextLoginAllowed = (remoteAddress: string | undefined, secure: boolean, allowInsecureAuth: boolean): boolean => {
  if (secure || allowInsecureAuth) return true;
  if (!remoteAddress || isIP(remoteAddress) === 0) return false;
  const address = remoteAddress.startsWith('::ffff:') ? remoteAddress.slice(7) : remoteAddress;
  return address === '::1' || /^127\./.test(address);
};
