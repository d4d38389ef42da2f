import { isIP } from 'node:net';
import type { Logger } from '../core/logger.js';
import type { Folder } from '../core/types.js';
import type { ImapIdentity } from '../services/imap/session.js';
import type { Services } from '../services/index.js';
import type { Chunk } from './format.js';
import { ParseError, parseCommand, type Command, type Token } from './parser.js';
import { oneLine, responseForError } from './replies.js';
import { sequenceOf } from './sequence.js';

export type SessionState = 'not-authenticated' | 'authenticated' | 'selected' | 'logout';

/** The folder a session has selected, with its UIDs at the session's sequence numbers. */
export interface Selection {
  folder: Folder;
  /** Ascending; message sequence number n is uids[n - 1] (RFC 3501 section 2.3.1.2). */
  uids: number[];
  readOnly: boolean;
}

export interface Output {
  /** Writes response bytes in order; resolves once the socket can take more. */
  write(chunks: readonly Chunk[]): Promise<void>;
  end(): void;
}

export interface SessionOptions {
  /** False on a non-loopback connection without TLS unless imap.allowInsecureAuth. */
  plaintextLoginAllowed: boolean;
}

/** What a command returns: the tagged response after the tag, e.g. "OK FETCH completed". */
export type Handler = (session: ImapSession, args: Token[], command: Command) => Promise<string> | string;

export interface CommandSpec {
  states: readonly SessionState[];
  run: Handler;
}

/** The state of one IMAP connection (RFC 3501 section 3) and the dispatch of its commands. */
export class ImapSession {
  state: SessionState = 'not-authenticated';
  identity: ImapIdentity | null = null;
  selection: Selection | null = null;
  private secret = '';
  private idle: { tag: string; unwatch: () => void } | null = null;
  private pendingSasl: ((line: string) => Promise<string>) | null = null;
  private pendingSaslTag = '';

  constructor(
    readonly services: Services,
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

  /** The logged-in identity; commands that need it only run after LOGIN. */
  requireIdentity(): ImapIdentity {
    if (!this.identity) throw new ParseError('log in first');
    return this.identity;
  }

  requireSelection(): Selection {
    if (!this.selection) throw new ParseError('select a folder first');
    return this.selection;
  }

  loggedIn(identity: ImapIdentity, secret: string): void {
    this.identity = identity;
    this.secret = secret;
    this.state = 'authenticated';
  }

  /** AUTHENTICATE: the next line the client sends is the SASL response (RFC 3501 6.2.2). */
  awaitSaslResponse(tag: string, onResponse: (line: string) => Promise<string>): void {
    this.pendingSaslTag = tag;
    this.pendingSasl = onResponse;
  }

  async handle(frame: Buffer): Promise<void> {
    if (this.state === 'logout') return;
    if (this.pendingSasl) return this.finishSasl(frame);
    if (this.idle) return this.finishIdle(frame);
    let command: Command;
    try {
      command = parseCommand(frame);
    } catch (error) {
      const tag = error instanceof ParseError && error.tag ? error.tag : '*';
      return this.line(`${tag} BAD ${oneLine((error as Error).message)}`);
    }
    await this.run(command);
  }

  private async run(command: Command): Promise<void> {
    const spec = this.commands.get(command.name);
    if (!spec) return this.line(`${command.tag} BAD unknown command ${command.name}`);
    if (!spec.states.includes(this.state)) return this.line(`${command.tag} BAD ${command.name} is not allowed ${stateText(this.state)}`);
    if (this.identity && !this.services.imap.stillValid(this.identity, this.secret)) return this.bye('the key was revoked or expired');
    let result: string;
    try {
      result = await spec.run(this, command.args, command);
    } catch (error) {
      result = this.failure(command, error);
    }
    if (this.state === 'logout') return;
    if (!this.idle && !this.pendingSasl) {
      await this.reportChanges(!NO_EXPUNGE_DURING.has(command.name));
      await this.line(`${command.tag} ${result}`);
    }
  }

  private failure(command: Command, error: unknown): string {
    if (error instanceof ParseError) return `BAD ${oneLine(error.message)}`;
    const mapped = responseForError(error);
    if (mapped) return mapped;
    this.logger.error('imap command failed', { command: command.name, error: error instanceof Error ? error.stack ?? error.message : String(error) });
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
   * Reports what changed in the selected folder since the session last looked: "* n EXPUNGE"
   * for each message removed (RFC 3501 section 7.4.1), highest number first so that each
   * number is right when sent, unless `expunge` is false; then "* n EXISTS" for mail stored
   * since (section 7.3.1). Removals held back stay in the view until a later report.
   */
  async reportChanges(expunge = true): Promise<void> {
    const selection = this.selection;
    if (!selection) return;
    const { fresh, gone } = this.services.imap.changes(selection.folder, selection.uids);
    if (expunge) {
      for (const uid of [...gone].reverse()) {
        const sequence = sequenceOf(selection.uids, uid);
        selection.uids.splice(sequence - 1, 1);
        await this.untagged([`${sequence} EXPUNGE`]);
      }
    }
    if (fresh.length === 0) return;
    selection.uids.push(...fresh);
    await this.untagged([`${selection.uids.length} EXISTS`]);
  }

  /**
   * IDLE (RFC 2177): new mail is pushed while the client waits, until it sends DONE. The
   * store's after-commit feed tells the session of mail committed to its mailbox; nothing polls.
   */
  async startIdle(tag: string): Promise<void> {
    const identity = this.requireIdentity();
    await this.line('+ idling');
    const unwatch = this.services.imap.watch(identity, (change) => {
      if (change.folder !== this.selection?.folder.name) return;
      this.reportChanges().catch((error: unknown) => this.logger.warn('imap idle push failed', { error: String(error) }));
    });
    this.idle = { tag, unwatch };
  }

  private async finishIdle(frame: Buffer): Promise<void> {
    const idle = this.idle as { tag: string; unwatch: () => void };
    if (frame.toString('latin1').trim().toUpperCase() !== 'DONE') return this.line('* BAD expected DONE to end IDLE');
    idle.unwatch();
    this.idle = null;
    await this.reportChanges();
    await this.line(`${idle.tag} OK IDLE terminated`);
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

/**
 * RFC 3501 section 7.4.1: no EXPUNGE while answering FETCH, STORE or SEARCH, whose sequence
 * numbers the client reads against the view it has (their UID forms may have one).
 */
const NO_EXPUNGE_DURING = new Set(['FETCH', 'STORE', 'SEARCH']);

const stateText = (state: SessionState): string =>
  state === 'not-authenticated' ? 'before LOGIN' : state === 'authenticated' ? 'without a selected folder' : 'in this state';

/** RFC 3501 section 6.2: plaintext passwords only over loopback or TLS, unless configured. */
export const plaintextLoginAllowed = (remoteAddress: string | undefined, secure: boolean, allowInsecureAuth: boolean): boolean => {
  if (secure || allowInsecureAuth) return true;
  if (!remoteAddress || isIP(remoteAddress) === 0) return false;
  const address = remoteAddress.startsWith('::ffff:') ? remoteAddress.slice(7) : remoteAddress;
  return address === '::1' || /^127\./.test(address);
};
