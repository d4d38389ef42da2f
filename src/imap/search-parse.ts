import type { SearchKey } from '../services/imap/session.js';
import { parseImapDate } from './format.js';
import { ParseError, type Token } from './parser.js';
import { isSequenceSet, parseSequenceSet, resolveSet } from './sequence.js';

/** Keys that can never match here: no \Answered, \Deleted, \Draft, keywords or \Recent are kept. */
const NEVER = new Set(['ANSWERED', 'DELETED', 'DRAFT', 'NEW', 'RECENT']);
/** Their negations, which every message matches. */
const ALWAYS = new Set(['ALL', 'OLD', 'UNANSWERED', 'UNDELETED', 'UNDRAFT']);
const HEADER_KEYS: Record<string, string> = { BCC: 'bcc', CC: 'cc', FROM: 'from', SUBJECT: 'subject', TO: 'to' };
const DATE_KEYS: Record<string, { of: 'internal' | 'sent'; op: 'before' | 'on' | 'since' }> = {
  BEFORE: { of: 'internal', op: 'before' }, ON: { of: 'internal', op: 'on' }, SINCE: { of: 'internal', op: 'since' },
  SENTBEFORE: { of: 'sent', op: 'before' }, SENTON: { of: 'sent', op: 'on' }, SENTSINCE: { of: 'sent', op: 'since' },
};

/**
 * Parentheses, NOT and OR together nest at most this deep: the parse and the match both
 * recurse once per level, so the bound keeps a hostile SEARCH to a tagged BAD.
 */
export const MAX_SEARCH_DEPTH = 64;

/** RFC 3501 section 6.4.4, with sequence and UID sets resolved against the selection's UIDs. */
export const parseSearch = (tokens: readonly Token[], uids: readonly number[], depth = 0): SearchKey => {
  const reader = new KeyReader(tokens, uids, depth);
  const keys: SearchKey[] = [];
  while (!reader.done()) keys.push(reader.key());
  if (keys.length === 0) throw new ParseError('SEARCH needs at least one key');
  return keys.length === 1 ? keys[0] : { kind: 'and', keys };
};

class KeyReader {
  private at = 0;

  constructor(private readonly tokens: readonly Token[], private readonly uids: readonly number[], private depth: number) {}

  done(): boolean {
    return this.at >= this.tokens.length;
  }

  private next(what: string): Token {
    const token = this.tokens[this.at];
    if (!token) throw new ParseError(`SEARCH: expected ${what}`);
    this.at += 1;
    return token;
  }

  private string(what: string): string {
    const token = this.next(what);
    if (token.type === 'list') throw new ParseError(`SEARCH: expected ${what}`);
    return token.value;
  }

  private number(what: string): number {
    const text = this.string(what);
    if (!/^\d{1,10}$/.test(text)) throw new ParseError(`SEARCH: expected ${what}`);
    return Number(text);
  }

  key(): SearchKey {
    const token = this.next('a search key');
    if (token.type === 'list') return parseSearch(token.items, this.uids, this.deeper());
    if (token.type === 'string') throw new ParseError('SEARCH: expected a search key, got a string');
    const name = token.value.toUpperCase();
    if (isSequenceSet(token.value)) return { kind: 'uids', uids: new Set(resolveSet(parseSequenceSet(token.value), this.uids, false)) };
    if (ALWAYS.has(name)) return { kind: 'all' };
    if (NEVER.has(name)) return { kind: 'none' };
    if (HEADER_KEYS[name]) return { kind: 'header', field: HEADER_KEYS[name], text: this.string('a string') };
    if (DATE_KEYS[name]) return { kind: 'date', ...DATE_KEYS[name], day: this.date() };
    return this.namedKey(name);
  }

  private namedKey(name: string): SearchKey {
    switch (name) {
      case 'SEEN': return { kind: 'flag', flag: 'seen', set: true };
      case 'UNSEEN': return { kind: 'flag', flag: 'seen', set: false };
      case 'FLAGGED': return { kind: 'flag', flag: 'flagged', set: true };
      case 'UNFLAGGED': return { kind: 'flag', flag: 'flagged', set: false };
      case 'KEYWORD': this.string('a keyword'); return { kind: 'none' };
      case 'UNKEYWORD': this.string('a keyword'); return { kind: 'all' };
      case 'HEADER': return { kind: 'header', field: this.string('a header field name').toLowerCase(), text: this.string('a string') };
      case 'BODY': return { kind: 'text', scope: 'body', text: this.string('a string') };
      case 'TEXT': return { kind: 'text', scope: 'text', text: this.string('a string') };
      case 'LARGER': return { kind: 'size', op: 'larger', bytes: this.number('a size') };
      case 'SMALLER': return { kind: 'size', op: 'smaller', bytes: this.number('a size') };
      case 'NOT': return { kind: 'not', key: this.nested() };
      case 'OR': return { kind: 'or', left: this.nested(), right: this.nested() };
      case 'UID': return { kind: 'uids', uids: new Set(resolveSet(parseSequenceSet(this.string('a UID set')), this.uids, true)) };
      default: throw new ParseError(`SEARCH: unknown key ${name.slice(0, 40)}`);
    }
  }

  /** A key inside NOT or OR: one level deeper. */
  private nested(): SearchKey {
    this.depth = this.deeper();
    try {
      return this.key();
    } finally {
      this.depth -= 1;
    }
  }

  private deeper(): number {
    if (this.depth >= MAX_SEARCH_DEPTH) throw new ParseError(`SEARCH: keys nest deeper than ${MAX_SEARCH_DEPTH} levels`);
    return this.depth + 1;
  }

  private date(): number {
    const text = this.string('a date');
    const day = parseImapDate(text);
    if (day === null) throw new ParseError(`SEARCH: invalid date "${text.slice(0, 40)}", expected e.g. 1-Feb-2026`);
    return day;
  }
}
