import type { MessageFlags } from '../core/types.js';
import type { FlagChange, SystemFlag } from '../services/mail/message-ops.js';
import { ParseError, type Token } from './parser.js';

/** RFC 3501 section 2.3.2 system flags, in the order responses list them. */
const SYSTEM: readonly [SystemFlag, string][] = [
  ['answered', '\\Answered'],
  ['flagged', '\\Flagged'],
  ['deleted', '\\Deleted'],
  ['seen', '\\Seen'],
  ['draft', '\\Draft'],
];
const BY_NAME = new Map(SYSTEM.map(([flag, name]) => [name.toLowerCase(), flag]));

export const SYSTEM_FLAGS = SYSTEM.map(([, name]) => name).join(' ');
/** A keyword is an atom (RFC 3501 section 9): no atom-specials, no backslash. */
const KEYWORD = /^[^\x00-\x20\x7f-\uffff(){%*"\\\]]{1,100}$/;
const MAX_KEYWORDS = 64;

/** The FLAGS response (section 7.2.6): the system flags and the folder's keywords. */
export const flagsResponse = (keywords: readonly string[]): string => `FLAGS (${[SYSTEM_FLAGS, ...keywords].join(' ')})`;

/** PERMANENTFLAGS (section 7.1): all of them, and \* (new keywords may be made). */
export const permanentFlags = (keywords: readonly string[]): string => `(${[SYSTEM_FLAGS, ...keywords, '\\*'].join(' ')})`;

/** A message's flags as a FETCH FLAGS list; \Recent when it is recent to this session. */
export const flagsText = (flags: MessageFlags, recent: boolean): string => {
  if (flags.keywords.length === 0) return PLAIN[SYSTEM.reduce((bits, [flag], index) => (flags[flag] ? bits | (1 << index) : bits), recent ? 32 : 0)];
  return listText(
    SYSTEM.filter(([flag]) => flags[flag]).map(([, name]) => name),
    flags.keywords,
    recent,
  );
};

const listText = (system: readonly string[], keywords: readonly string[], recent: boolean): string =>
  `(${[...system, ...keywords, ...(recent ? ['\\Recent'] : [])].join(' ')})`;

/** The 64 lists without keywords (five system flags and \Recent as bits), made once: an initial sync formats thousands. */
const PLAIN = Array.from({ length: 64 }, (_, bits) =>
  listText(
    SYSTEM.filter((_, index) => bits & (1 << index)).map(([, name]) => name),
    [],
    (bits & 32) !== 0,
  ),
);

/**
 * A flag list of STORE or APPEND: "(\Seen $Label1)", or bare flags after STORE's item.
 * \Recent cannot be set by a client and is ignored; an unknown \flag is an error.
 */
export const parseFlags = (tokens: readonly Token[]): { system: Set<SystemFlag>; keywords: string[] } => {
  const system = new Set<SystemFlag>();
  const keywords = new Set<string>();
  for (const token of tokens) {
    if (token.type !== 'atom') throw new ParseError('expected a flag');
    const name = token.value;
    if (name.startsWith('\\')) {
      const flag = BY_NAME.get(name.toLowerCase());
      if (flag) system.add(flag);
      else if (name.toLowerCase() !== '\\recent') throw new ParseError(`unknown system flag ${name.slice(0, 40)}`);
      continue;
    }
    if (!KEYWORD.test(name)) throw new ParseError(`invalid keyword ${name.slice(0, 40)}`);
    keywords.add(name);
  }
  if (keywords.size > MAX_KEYWORDS) throw new ParseError(`at most ${MAX_KEYWORDS} keywords`);
  return { system, keywords: [...keywords] };
};

/** The flags an APPEND stores (section 6.3.11). */
export const appendFlags = (tokens: readonly Token[]): MessageFlags => {
  const { system, keywords } = parseFlags(tokens);
  return {
    seen: system.has('seen'),
    answered: system.has('answered'),
    flagged: system.has('flagged'),
    deleted: system.has('deleted'),
    draft: system.has('draft'),
    keywords,
  };
};

export const flagChange = (mode: FlagChange['mode'], tokens: readonly Token[]): FlagChange => ({ mode, ...parseFlags(tokens) });
