/**
 * Frames the client's byte stream into whole commands (RFC 3501 section 2.2): a command
 * is a line, and when a line ends in a literal announcement `{n}` (synchronizing: we answer
 * "+" first) or `{n+}` (LITERAL+, RFC 7888: no wait), n raw bytes follow and the command
 * continues on the line after them. Lines and literals are capped; an APPEND's literals
 * (the message) have a cap of their own.
 */
export interface ReaderEvents {
  /** One complete command: its lines and literals exactly as sent, without the final CRLF. */
  command(frame: Buffer): void;
  /** A synchronizing literal was announced and fits: the client waits for "+". */
  continueLiteral(): void;
  /**
   * A literal too large: a synchronizing one is not sent; a non-synchronizing one was read
   * and dropped with the rest of its command. Either way the command gets this answer.
   */
  rejectLiteral(tag: string, message: string, append: boolean): void;
  /** Input we cannot resynchronize after (a line too long). */
  fatal(message: string): void;
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
  private commandBytes = 0;
  private literalRemaining = 0;
  /** Dropping a refused non-synchronizing literal and the rest of its command, then answering `tag`. */
  private discarding: { tag: string; message: string; append: boolean } | null = null;
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

  private takeLiteral(): boolean {
    const take = Math.min(this.literalRemaining, this.buffered.length);
    if (!this.discarding) this.parts.push(this.buffered.subarray(0, take));
    this.buffered = this.buffered.subarray(take);
    this.literalRemaining -= take;
    return this.literalRemaining === 0;
  }

  private takeLine(line: Buffer): void {
    this.parts.push(line);
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
    if (size > cap || this.commandBytes + size > this.limits.maxCommandBytes + (append ? cap : 0)) {
      const tag = this.parts[0].toString('latin1').split(' ')[0].trim();
      const message = `literal of ${size} bytes is over the ${cap}-byte limit`;
      this.reset();
      if (synchronizing) return this.events.rejectLiteral(tag, message, append);
      // RFC 7888 section 4: a non-synchronizing literal is on its way; read past it, then answer.
      this.discarding = { tag, message, append };
      this.literalRemaining = size;
      return;
    }
    this.commandBytes += size;
    this.literalRemaining = size;
    if (synchronizing) this.events.continueLiteral();
  }

  /** The rest of a refused command: more literals are dropped too, until a line ends it. */
  private discardLine(line: Buffer): void {
    const literal = LITERAL_AT_END.exec(line.subarray(Math.max(0, line.length - 16)).toString('latin1'));
    if (literal && literal[2] === '+') {
      this.literalRemaining = Number(literal[1]);
      return;
    }
    const { tag, message, append } = this.discarding as { tag: string; message: string; append: boolean };
    this.discarding = null;
    this.events.rejectLiteral(tag, message, append);
  }

  private emit(): void {
    const frame = Buffer.concat(this.parts);
    this.reset();
    const end = frame.length - (frame[frame.length - 2] === 0x0d ? 2 : 1);
    this.events.command(frame.subarray(0, end));
  }

  private reset(): void {
    this.parts = [];
    this.commandBytes = 0;
  }

  private die(message: string): void {
    this.dead = true;
    this.buffered = Buffer.alloc(0);
    this.reset();
    this.events.fatal(message);
  }
}
