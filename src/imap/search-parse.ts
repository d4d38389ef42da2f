import type { SearchKey } from '../services/imap/session.js';
import type { SystemFlag } from '../services/mail/message-ops.js';
import { parseImapDate } from './format.js';
import { ParseError, type Token } from './parser.js';
import { isSequenceSet, parseSequenceSet, resolveSet } from './sequence.js';

/** Flag keys (RFC 3501 section 6.4.4): the flag and whether it is set. */
const FLAG_KEYS: Record<string, { flag: SystemFlag; set: boolean }> = {
  SEEN: { flag: 'seen', set: true },
  UNSEEN: { flag: 'seen', set: false },
  ANSWERED: { flag: 'answered', set: true },
  UNANSWERED: { flag: 'answered', set: false },
  FLAGGED: { flag: 'flagged', set: true },
  UNFLAGGED: { flag: 'flagged', set: false },
  DELETED: { flag: 'deleted', set: true },
  UNDELETED: { flag: 'deleted', set: false },
  DRAFT: { flag: 'draft', set: true },
  UNDRAFT: { flag: 'draft', set: false },
};
const RECENT_KEYS: Record<string, 'recent' | 'new' | 'old'> = { RECENT: 'recent', NEW: 'new', OLD: 'old' };
const HEADER_KEYS: Record<string, string> = { BCC: 'bcc', CC: 'cc', FROM: 'from', SUBJECT: 'subject', TO: 'to' };
const DATE_KEYS: Record<string, { of: 'internal' | 'sent'; op: 'before' | 'on' | 'since' }> = {
  BEFORE: { of: 'internal', op: 'before' },
  ON: { of: 'internal', op: 'on' },
  SINCE: { of: 'internal', op: 'since' },
  SENTBEFORE: { of: 'sent', op: 'before' },
  SENTON: { of: 'sent', op: 'on' },
  SENTSINCE: { of: 'sent', op: 'since' },
};

/**
 * Parentheses, NOT and OR together nest at most this deep: the parse and the match both
 * recurse once per level, so the bound keeps a hostile SEARCH to a tagged BAD.
 */
export const MAX_SEARCH_DEPTH = 64;

/**
 * RFC 3501 section 6.4.4, with sequence and UID sets resolved against the selection's UIDs;
 * `modseq` is true when the key uses RFC 7162's MODSEQ (the response then names the highest).
 */
export const parseSearch = (tokens: readonly Token[], uids: readonly number[]): { key: SearchKey; modseq: boolean } => {
  const state = { modseq: false };
  return { key: parseKeys(tokens, uids, 0, state), modseq: state.modseq };
};

const parseKeys = (tokens: readonly Token[], uids: readonly number[], depth: number, state: { modseq: boolean }): SearchKey => {
  const reader = new KeyReader(tokens, uids, depth, state);
  const keys: SearchKey[] = [];
  while (!reader.done()) keys.push(reader.key());
  if (keys.length === 0) throw new ParseError('SEARCH needs at least one key');
  return keys.length === 1 ? keys[0] : { kind: 'and', keys };
};

class KeyReader {
  private at = 0;

  constructor(
    private readonly tokens: readonly Token[],
    private readonly uids: readonly number[],
    private depth: number,
    private readonly state: { modseq: boolean },
  ) {}

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
    if (token.type === 'list' || token.type === 'message') throw new ParseError(`SEARCH: expected ${what}`);
    return token.value;
  }

  private number(what: string): number {
    const text = this.string(what);
    if (!/^\d{1,10}$/.test(text)) throw new ParseError(`SEARCH: expected ${what}`);
    return Number(text);
  }

  key(): SearchKey {
    const token = this.next('a search key');
    if (token.type === 'list') return parseKeys(token.items, this.uids, this.deeper(), this.state);
    if (token.type === 'string' || token.type === 'message') throw new ParseError('SEARCH: expected a search key, got a string');
    const name = token.value.toUpperCase();
    if (isSequenceSet(token.value)) return { kind: 'uids', uids: new Set(resolveSet(parseSequenceSet(token.value), this.uids, false)) };
    if (name === 'ALL') return { kind: 'all' };
    if (FLAG_KEYS[name]) return { kind: 'flag', ...FLAG_KEYS[name] };
    if (RECENT_KEYS[name]) return { kind: 'recent', which: RECENT_KEYS[name] };
    if (HEADER_KEYS[name]) return { kind: 'header', field: HEADER_KEYS[name], text: this.string('a string') };
    if (DATE_KEYS[name]) return { kind: 'date', ...DATE_KEYS[name], day: this.date() };
    return this.namedKey(name);
  }

  private namedKey(name: string): SearchKey {
    switch (name) {
      case 'KEYWORD':
        return { kind: 'keyword', keyword: this.string('a keyword'), set: true };
      case 'UNKEYWORD':
        return { kind: 'keyword', keyword: this.string('a keyword'), set: false };
      case 'MODSEQ':
        return this.modseq();
      case 'HEADER':
        return { kind: 'header', field: this.string('a header field name').toLowerCase(), text: this.string('a string') };
      case 'BODY':
        return { kind: 'text', scope: 'body', text: this.string('a string') };
      case 'TEXT':
        return { kind: 'text', scope: 'text', text: this.string('a string') };
      case 'LARGER':
        return { kind: 'size', op: 'larger', bytes: this.number('a size') };
      case 'SMALLER':
        return { kind: 'size', op: 'smaller', bytes: this.number('a size') };
      case 'NOT':
        return { kind: 'not', key: this.nested() };
      case 'OR':
        return { kind: 'or', left: this.nested(), right: this.nested() };
      case 'UID':
        return { kind: 'uids', uids: new Set(resolveSet(parseSequenceSet(this.string('a UID set')), this.uids, true)) };
      default:
        throw new ParseError(`SEARCH: unknown key ${name.slice(0, 40)}`);
    }
  }

  /** RFC 7162 section 3.1.5: MODSEQ [entry-name entry-type] mod-sequence; flag entries are not told apart. */
  private modseq(): SearchKey {
    this.state.modseq = true;
    const next = this.tokens[this.at];
    if (next && next.type === 'string') {
      this.at += 1;
      this.string('an entry type (priv, shared or all)');
    }
    const text = this.string('a mod-sequence');
    if (!/^\d{1,19}$/.test(text)) throw new ParseError('SEARCH: expected a mod-sequence');
    return { kind: 'modseq', modseq: Number(text) };
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
