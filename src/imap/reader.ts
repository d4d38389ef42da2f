/**
 * Frames the client's byte stream into whole commands (RFC 3501 section 2.2): a command
 * is a line, and when a line ends in a literal announcement `{n}` (synchronizing: we answer
 * "+" first) or `{n+}` (LITERAL+, RFC 7888: no wait), n raw bytes follow and the command
 * continues on the line after them. Lines and literals are capped.
 */
export interface ReaderEvents {
  /** One complete command: its lines and literals exactly as sent, without the final CRLF. */
  command(frame: Buffer): void;
  /** A synchronizing literal was announced and fits: the client waits for "+". */
  continueLiteral(): void;
  /** A synchronizing literal that is too large: the client will not send it. */
  rejectLiteral(tag: string, message: string): void;
  /** Input we cannot resynchronize after (a line or non-synchronizing literal too large). */
  fatal(message: string): void;
}

const LITERAL_AT_END = /\{(\d{1,10})(\+?)\}\r?\n$/;

export class CommandReader {
  private buffered: Buffer = Buffer.alloc(0);
  private parts: Buffer[] = [];
  private commandBytes = 0;
  private literalRemaining = 0;
  private dead = false;

  constructor(
    private readonly maxLineBytes: number,
    private readonly maxCommandBytes: number,
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
        if (this.buffered.length > this.maxLineBytes) this.die(`line longer than ${this.maxLineBytes} bytes`);
        return;
      }
      const line = this.buffered.subarray(0, lf + 1);
      this.buffered = this.buffered.subarray(lf + 1);
      if (line.length > this.maxLineBytes) return this.die(`line longer than ${this.maxLineBytes} bytes`);
      this.takeLine(line);
    }
  }

  private takeLiteral(): boolean {
    const take = Math.min(this.literalRemaining, this.buffered.length);
    this.parts.push(this.buffered.subarray(0, take));
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
    if (size > this.maxLineBytes || this.commandBytes + size > this.maxCommandBytes) {
      const message = `literal of ${size} bytes is over the ${this.maxLineBytes}-byte limit`;
      if (!synchronizing) return this.die(message);
      const tag = this.parts[0].toString('latin1').split(' ')[0].trim();
      this.reset();
      this.events.rejectLiteral(tag, message);
      return;
    }
    this.commandBytes += size;
    this.literalRemaining = size;
    if (synchronizing) this.events.continueLiteral();
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
