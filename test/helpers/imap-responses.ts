/**
 * A small reader of IMAP server responses (RFC 3501 section 7) for tests that compare two
 * servers: each response becomes a tag and a list of values, with quoted strings and
 * literals alike as strings, NIL as null, lists as arrays and atoms as strings (bracketed
 * parts such as BODY[HEADER.FIELDS (A B)] stay one atom).
 */
export type Value = string | null | Value[];

export interface Response {
  tag: string;
  values: Value[];
}

export const parseResponses = (text: string): Response[] => {
  const reader = new Reader(text);
  const out: Response[] = [];
  while (!reader.done()) {
    const tag = reader.word();
    const values: Value[] = [];
    while (!reader.lineEnd()) values.push(reader.value());
    reader.skipLineEnd();
    out.push({ tag, values });
  }
  return out;
};

class Reader {
  private at = 0;

  constructor(private readonly text: string) {}

  done(): boolean {
    return this.at >= this.text.length;
  }

  lineEnd(): boolean {
    while (this.text[this.at] === ' ') this.at += 1;
    return this.done() || this.text.startsWith('\r\n', this.at) || this.text[this.at] === '\n';
  }

  skipLineEnd(): void {
    if (this.text.startsWith('\r\n', this.at)) this.at += 2;
    else if (this.text[this.at] === '\n') this.at += 1;
  }

  word(): string {
    const start = this.at;
    while (!this.done() && this.text[this.at] !== ' ' && this.text[this.at] !== '\r' && this.text[this.at] !== '\n') this.at += 1;
    return this.text.slice(start, this.at);
  }

  value(): Value {
    const char = this.text[this.at];
    if (char === '(') return this.list();
    if (char === '"') return this.quoted();
    if (char === '{') return this.literal();
    const atom = this.atom();
    return atom.toUpperCase() === 'NIL' ? null : atom;
  }

  private list(): Value[] {
    this.at += 1;
    const items: Value[] = [];
    for (;;) {
      while (this.text[this.at] === ' ') this.at += 1;
      if (this.done()) return items;
      if (this.text[this.at] === ')') {
        this.at += 1;
        return items;
      }
      items.push(this.value());
    }
  }

  private quoted(): string {
    this.at += 1;
    let out = '';
    while (!this.done() && this.text[this.at] !== '"') {
      if (this.text[this.at] === '\\') this.at += 1;
      out += this.text[this.at];
      this.at += 1;
    }
    this.at += 1;
    return out;
  }

  private literal(): string {
    const match = /^\{(\d+)\+?\}\r\n/.exec(this.text.slice(this.at, this.at + 24));
    if (!match) return this.atom();
    const start = this.at + match[0].length;
    this.at = start + Number(match[1]);
    return this.text.slice(start, this.at);
  }

  private atom(): string {
    const start = this.at;
    let depth = 0;
    while (!this.done()) {
      const char = this.text[this.at];
      if (char === '[') depth += 1;
      else if (char === ']') depth = Math.max(0, depth - 1);
      else if (depth === 0 && (char === ' ' || char === '(' || char === ')' || char === '\r' || char === '\n')) break;
      this.at += 1;
    }
    if (this.at === start) this.at += 1;
    return this.text.slice(start, this.at);
  }
}
