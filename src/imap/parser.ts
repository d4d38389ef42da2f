import type { ReceivedMessage } from '../core/message-intake.js';

/**
 * Parses one framed command (RFC 3501 section 9 grammar, loosely) into a tag, a name and
 * argument tokens. Fetch attributes like BODY.PEEK[HEADER.FIELDS (A B)]<0.10> stay one
 * atom: inside brackets spaces and parentheses belong to the atom.
 */
export type Token =
  | { type: 'atom'; value: string }
  /** A quoted string or a literal; a literal also keeps its exact bytes (an APPEND's message). */
  | { type: 'string'; value: string; bytes?: Buffer }
  | { type: 'list'; items: Token[] }
  /** An APPEND's message too large for the command's frame: its bytes went to the intake (src/imap/reader.ts). */
  | { type: 'message'; message: Promise<ReceivedMessage> };

/** Literals whose bytes are not in the frame, by where they would start in it (src/imap/reader.ts). */
export type DetachedLiterals = ReadonlyMap<number, Promise<ReceivedMessage>>;

const NO_DETACHED: DetachedLiterals = new Map();

export interface Command {
  tag: string;
  /** Uppercased. */
  name: string;
  args: Token[];
}

export class ParseError extends Error {
  constructor(
    message: string,
    readonly tag: string | null = null,
  ) {
    super(message);
    this.name = 'ParseError';
  }
}

const SP = 0x20;
const ATOM_END = new Set([SP, 0x28, 0x29, 0x0d, 0x0a]); // SP ( ) CR LF
const TAG_FORBIDDEN = /[\x00-\x20(){%*"\\+]/;
/**
 * Parenthesized lists nest at most this deep. No command needs more than a few levels; the
 * bound keeps the recursive parse off the end of the stack (a tagged BAD, not a crash).
 */
export const MAX_LIST_DEPTH = 64;

export const parseCommand = (frame: Buffer, detached: DetachedLiterals = NO_DETACHED): Command => {
  const parser = new Parser(frame, detached);
  const tag = parser.word();
  if (tag === '' || TAG_FORBIDDEN.test(tag)) throw new ParseError('a command starts with a tag');
  if (!parser.skipSpace()) throw new ParseError('missing command name', tag);
  const name = parser.word().toUpperCase();
  if (!/^[A-Z]+$/.test(name)) throw new ParseError('invalid command name', tag);
  try {
    const args: Token[] = [];
    while (parser.skipSpace()) args.push(parser.token());
    if (!parser.atEnd()) throw new ParseError('unexpected characters after the arguments');
    return { tag, name, args };
  } catch (error) {
    // Every failure once the tag is known is answered with that tag (RFC 3501 section 7.1.3).
    throw new ParseError(error instanceof ParseError ? error.message : 'the arguments could not be parsed', tag);
  }
};

class Parser {
  private at = 0;
  private depth = 0;

  constructor(
    private readonly input: Buffer,
    private readonly detached: DetachedLiterals,
  ) {}

  atEnd(): boolean {
    return this.at >= this.input.length;
  }

  /** Characters up to the next space (used for the tag and the command name). */
  word(): string {
    const start = this.at;
    while (this.at < this.input.length && this.input[this.at] !== SP) this.at += 1;
    return this.input.toString('latin1', start, this.at);
  }

  skipSpace(): boolean {
    if (this.input[this.at] !== SP) return false;
    while (this.input[this.at] === SP) this.at += 1;
    return !this.atEnd();
  }

  token(): Token {
    const byte = this.input[this.at];
    if (byte === 0x28) return this.list();
    if (byte === 0x22) return { type: 'string', value: this.quoted() };
    if (byte === 0x7b) {
      const bytes = this.literal();
      return Buffer.isBuffer(bytes) ? { type: 'string', value: bytes.toString('utf8'), bytes } : { type: 'message', message: bytes };
    }
    if (byte === 0x29) throw new ParseError('unbalanced ")"');
    return { type: 'atom', value: this.atom() };
  }

  private list(): Token {
    if (this.depth >= MAX_LIST_DEPTH) throw new ParseError(`lists nest deeper than ${MAX_LIST_DEPTH} levels`);
    this.depth += 1;
    this.at += 1;
    const items: Token[] = [];
    while (this.input[this.at] === SP) this.at += 1;
    while (this.input[this.at] !== 0x29) {
      if (this.atEnd()) throw new ParseError('unterminated list');
      items.push(this.token());
      while (this.input[this.at] === SP) this.at += 1;
    }
    this.at += 1;
    this.depth -= 1;
    return { type: 'list', items };
  }

  private quoted(): string {
    this.at += 1;
    const out: number[] = [];
    while (this.at < this.input.length) {
      const byte = this.input[this.at];
      if (byte === 0x22) {
        this.at += 1;
        return Buffer.from(out).toString('utf8');
      }
      if (byte === 0x0d || byte === 0x0a) break;
      if (byte === 0x5c) {
        const next = this.input[this.at + 1];
        if (next !== 0x22 && next !== 0x5c) throw new ParseError('only \\" and \\\\ may be escaped in a quoted string');
        out.push(next);
        this.at += 2;
        continue;
      }
      out.push(byte);
      this.at += 1;
    }
    throw new ParseError('unterminated quoted string');
  }

  /** `{n}` or `{n+}`, CRLF, then n bytes, or a message detached from the frame; the reader has already checked the framing. */
  private literal(): Buffer | Promise<ReceivedMessage> {
    const header = /^\{(\d+)\+?\}\r?\n/.exec(this.input.toString('latin1', this.at, Math.min(this.at + 16, this.input.length)));
    if (!header) throw new ParseError('malformed literal');
    const start = this.at + header[0].length;
    const message = this.detached.get(start);
    if (message) {
      this.at = start;
      return message;
    }
    const end = start + Number(header[1]);
    if (end > this.input.length) throw new ParseError('literal shorter than announced');
    this.at = end;
    return this.input.subarray(start, end);
  }

  private atom(): string {
    const start = this.at;
    let depth = 0;
    while (this.at < this.input.length) {
      const byte = this.input[this.at];
      if (byte === 0x5b) depth += 1;
      else if (byte === 0x5d) depth = Math.max(0, depth - 1);
      else if (depth === 0 && ATOM_END.has(byte)) break;
      else if (depth === 0 && (byte === 0x22 || byte === 0x7b)) throw new ParseError('unexpected character in an atom');
      this.at += 1;
    }
    if (depth > 0) throw new ParseError('unterminated "["');
    if (this.at === start) throw new ParseError('empty argument');
    return this.input.toString('latin1', start, this.at);
  }
}

/** Argument helpers: each throws a ParseError naming what was expected. */
export const asString = (token: Token | undefined, what: string): string => {
  if (!token || token.type === 'list' || token.type === 'message') throw new ParseError(`expected ${what}`);
  return token.value;
};

export const asAtom = (token: Token | undefined, what: string): string => {
  if (token?.type !== 'atom') throw new ParseError(`expected ${what}`);
  return token.value;
};

/** A string's exact bytes: a literal's as sent, a quoted string's as UTF-8. */
export const asBytes = (token: Token | undefined, what: string): Buffer => {
  if (token?.type !== 'string') throw new ParseError(`expected ${what}`);
  return token.bytes ?? Buffer.from(token.value, 'utf8');
};

export const asList = (token: Token | undefined, what: string): Token[] => {
  if (token?.type !== 'list') throw new ParseError(`expected ${what}`);
  return token.items;
};

export const expectArgs = (args: Token[], count: number, usage: string): void => {
  if (args.length !== count) throw new ParseError(`usage: ${usage}`);
};
