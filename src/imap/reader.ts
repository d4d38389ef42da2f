/**
 * Frames the client's byte stream into whole commands (RFC 3501 section 2.2): a command
 * is a line, and when a line ends in a literal announcement `{n}` (synchronizing: we answer
 * "+" first) or `{n+}` (LITERAL+, RFC 7888: no wait), n raw bytes follow and the command
 * continues on the line after them. Lines and literals are capped; an APPEND's literals
 * (the message) have a cap of their own, and a message too large for the frame goes to the
 * intake as it arrives (src/core/message-intake.ts), under the budget shared with SMTP.
 */
import { IntakeFull, type MessageSink, type ReceivedMessage } from '../core/message-intake.js';
import type { DetachedLiterals } from './parser.js';

export interface ReaderEvents {
  /**
   * One complete command: its lines and literals exactly as sent, without the final CRLF,
   * except the bytes of an APPEND's message too large for the frame, which went to the intake
   * and are given by where they would start.
   */
  command(frame: Buffer, detached: DetachedLiterals): void;
  /** A synchronizing literal was announced and fits: the client waits for "+". */
  continueLiteral(): void;
  /**
   * A literal refused: a synchronizing one is not sent; a non-synchronizing one was read
   * and dropped with the rest of its command. Either way the command gets this response.
   */
  rejectLiteral(tag: string, response: string): void;
  /** Input we cannot resynchronize after (a line too long). */
  fatal(message: string): void;
  /**
   * Where an APPEND's message of `bytes` bytes, too large for the frame, goes as it arrives
   * (src/core/message-intake.ts); null when no APPEND may run now (before LOGIN). Throws
   * IntakeFull when there is no room for it.
   */
  openMessage(bytes: number): MessageSink | null;
}

export interface ReaderLimits {
  maxLineBytes: number;
  /** Lines and literals of one command together. */
  maxCommandBytes: number;
  /** One literal of an APPEND (RFC 3501 section 6.3.11: the message). */
  maxAppendBytes: number;
}

const LITERAL_AT_END = /\{(\d{1,10})(\+?)\}\r?\n$/;
const APPEND_LINE = /^[^ ]+ +APPEND /i;

export class CommandReader {
  private buffered: Buffer = Buffer.alloc(0);
  private parts: Buffer[] = [];
  /** Bytes of the frame so far: where a detached literal would start. */
  private frameBytes = 0;
  private commandBytes = 0;
  private literalRemaining = 0;
  /** The APPEND message being received into the intake, and those of this command already whole. */
  private message: MessageSink | null = null;
  private detached = new Map<number, Promise<ReceivedMessage>>();
  /** Dropping a refused non-synchronizing literal and the rest of its command, then answering `tag`. */
  private discarding: { tag: string; response: string } | null = null;
  private dead = false;

  constructor(
    private readonly limits: ReaderLimits,
    private readonly events: ReaderEvents,
  ) {}

  push(chunk: Buffer): void {
    if (this.dead) return;
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    while (!this.dead && this.buffered.length > 0) {
      if (this.literalRemaining > 0) {
        if (!this.takeLiteral()) return;
        continue;
      }
      const lf = this.buffered.indexOf(0x0a);
      if (lf === -1) {
        if (this.buffered.length > this.limits.maxLineBytes) this.die(`line longer than ${this.limits.maxLineBytes} bytes`);
        return;
      }
      const line = this.buffered.subarray(0, lf + 1);
      this.buffered = this.buffered.subarray(lf + 1);
      if (line.length > this.limits.maxLineBytes) return this.die(`line longer than ${this.limits.maxLineBytes} bytes`);
      if (this.discarding) this.discardLine(line);
      else this.takeLine(line);
    }
  }

  /** While an APPEND's message waits for the spool to take what arrived, the caller reads no more. */
  backlog(): Promise<void> | null {
    return this.message && this.message.queuedBytes > 0 ? this.message.drain() : null;
  }

  /** The connection is gone: a message half received, or received for a command that never ran, is given back. */
  close(): void {
    this.dead = true;
    this.buffered = Buffer.alloc(0);
    this.reset();
  }

  private takeLiteral(): boolean {
    const take = Math.min(this.literalRemaining, this.buffered.length);
    const bytes = this.buffered.subarray(0, take);
    if (this.message) this.message.write(bytes);
    else if (!this.discarding) {
      this.parts.push(bytes);
      this.frameBytes += take;
    }
    this.buffered = this.buffered.subarray(take);
    this.literalRemaining -= take;
    if (this.literalRemaining > 0) return false;
    if (this.message) this.detach(this.message);
    return true;
  }

  /** The message is whole: the command gets it (or the reason it could not be kept) where its bytes would have been. */
  private detach(message: MessageSink): void {
    this.message = null;
    const whole = message.end();
    // Settled by the APPEND that awaits it, or given back with its frame; never an unhandled rejection.
    whole.catch(() => {});
    this.detached.set(this.frameBytes, whole);
  }

  private takeLine(line: Buffer): void {
    this.parts.push(line);
    this.frameBytes += line.length;
    this.commandBytes += line.length;
    const literal = LITERAL_AT_END.exec(line.subarray(Math.max(0, line.length - 16)).toString('latin1'));
    if (!literal) {
      this.emit();
      return;
    }
    const size = Number(literal[1]);
    const synchronizing = literal[2] !== '+';
    const append = APPEND_LINE.test(this.parts[0].toString('latin1', 0, 64));
    const cap = append ? this.limits.maxAppendBytes : this.limits.maxLineBytes;
    const tag = this.parts[0].toString('latin1').split(' ')[0].trim();
    if (size > cap || this.commandBytes + size > this.limits.maxCommandBytes + (append ? cap : 0)) {
      // RFC 7889: a message over APPENDLIMIT is NO [TOOBIG]; any other literal too large is a BAD command.
      return this.refuse(tag, `${append ? 'NO [TOOBIG]' : 'BAD'} literal of ${size} bytes is over the ${cap}-byte limit`, synchronizing, size);
    }
    this.commandBytes += size;
    this.literalRemaining = size;
    if (append && size > this.limits.maxLineBytes) {
      const refusal = this.openMessage(size);
      if (refusal) return this.refuse(tag, refusal, synchronizing, size);
    }
    if (synchronizing) this.events.continueLiteral();
  }

  /** The intake's sink for an APPEND's message, or the response that refuses it. */
  private openMessage(size: number): string | null {
    try {
      this.message = this.events.openMessage(size);
      return this.message ? null : 'BAD log in first: APPEND is not allowed before LOGIN';
    } catch (error) {
      // RFC 5530: LIMIT, an implementation limit; the client may try again later.
      if (error instanceof IntakeFull) return `NO [LIMIT] ${error.message}`;
      throw error;
    }
  }

  private refuse(tag: string, response: string, synchronizing: boolean, size: number): void {
    this.reset();
    this.literalRemaining = 0;
    if (synchronizing) return this.events.rejectLiteral(tag, response);
    // RFC 7888 section 4: a non-synchronizing literal is on its way; read past it, then answer.
    this.discarding = { tag, response };
    this.literalRemaining = size;
  }

  /** The rest of a refused command: more literals are dropped too, until a line ends it. */
  private discardLine(line: Buffer): void {
    const literal = LITERAL_AT_END.exec(line.subarray(Math.max(0, line.length - 16)).toString('latin1'));
    if (literal && literal[2] === '+') {
      this.literalRemaining = Number(literal[1]);
      return;
    }
    const { tag, response } = this.discarding as { tag: string; response: string };
    this.discarding = null;
    this.events.rejectLiteral(tag, response);
  }

  private emit(): void {
    const frame = Buffer.concat(this.parts);
    const detached = this.detached;
    this.parts = [];
    this.frameBytes = 0;
    this.commandBytes = 0;
    this.detached = new Map();
    const end = frame.length - (frame[frame.length - 2] === 0x0d ? 2 : 1);
    this.events.command(frame.subarray(0, end), detached);
  }

  /** Drops the command being read, and gives back any message of it. */
  private reset(): void {
    this.message?.release();
    this.message = null;
    releaseAll(this.detached);
    this.detached = new Map();
    this.parts = [];
    this.frameBytes = 0;
    this.commandBytes = 0;
  }

  private die(message: string): void {
    this.dead = true;
    this.buffered = Buffer.alloc(0);
    this.reset();
    this.events.fatal(message);
  }
}

/** Gives back every message of a command, received or still arriving; safe after an APPEND released its own. */
export const releaseAll = (detached: DetachedLiterals): void => {
  for (const whole of detached.values())
    void whole.then(
      (message) => message.release(),
      () => {},
    );
};
