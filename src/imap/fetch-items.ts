import { ParseError, type Token } from './parser.js';

/** RFC 3501 section 6.4.5 section-spec; `ALL` is the empty section, BODY[]. */
export interface Section {
  path: number[];
  spec: 'ALL' | 'HEADER' | 'HEADER.FIELDS' | 'HEADER.FIELDS.NOT' | 'TEXT' | 'MIME';
  /** Lowercased field names for HEADER.FIELDS and HEADER.FIELDS.NOT. */
  fields: string[];
}

export type FetchItem =
  | { kind: 'flags' }
  | { kind: 'uid' }
  | { kind: 'size' }
  | { kind: 'internaldate' }
  | { kind: 'envelope' }
  /** RFC 7162 section 3.1.4.1. */
  | { kind: 'modseq' }
  | { kind: 'structure'; extensible: boolean }
  | { kind: 'body'; label: string; section: Section; peek: boolean; partial: { start: number; length: number } | null };

const MACROS: Record<string, string[]> = {
  ALL: ['FLAGS', 'INTERNALDATE', 'RFC822.SIZE', 'ENVELOPE'],
  FAST: ['FLAGS', 'INTERNALDATE', 'RFC822.SIZE'],
  FULL: ['FLAGS', 'INTERNALDATE', 'RFC822.SIZE', 'ENVELOPE', 'BODY'],
};

const WHOLE: Section = { path: [], spec: 'ALL', fields: [] };

const SIMPLE: Record<string, FetchItem> = {
  FLAGS: { kind: 'flags' },
  UID: { kind: 'uid' },
  'RFC822.SIZE': { kind: 'size' },
  INTERNALDATE: { kind: 'internaldate' },
  ENVELOPE: { kind: 'envelope' },
  MODSEQ: { kind: 'modseq' },
  BODYSTRUCTURE: { kind: 'structure', extensible: true },
  BODY: { kind: 'structure', extensible: false },
  RFC822: { kind: 'body', label: 'RFC822', section: WHOLE, peek: false, partial: null },
  'RFC822.HEADER': { kind: 'body', label: 'RFC822.HEADER', section: { path: [], spec: 'HEADER', fields: [] }, peek: true, partial: null },
  'RFC822.TEXT': { kind: 'body', label: 'RFC822.TEXT', section: { path: [], spec: 'TEXT', fields: [] }, peek: false, partial: null },
};

/** The fetch attributes of a FETCH command: one atom (maybe a macro) or a list of them. */
export const parseFetchItems = (token: Token | undefined): FetchItem[] => {
  if (!token) throw new ParseError('expected fetch attributes');
  if (token.type === 'atom' && MACROS[token.value.toUpperCase()]) return MACROS[token.value.toUpperCase()].map(parseItem);
  const atoms = token.type === 'list' ? token.items : [token];
  if (atoms.length === 0) throw new ParseError('expected fetch attributes');
  return atoms.map((item) => {
    if (item.type !== 'atom') throw new ParseError('expected a fetch attribute');
    return parseItem(item.value);
  });
};

const BODY_ITEM = /^(BODY(?:\.PEEK)?)\[([^\]]*)\](?:<(\d{1,10})\.(\d{1,10})>)?$/i;

const parseItem = (text: string): FetchItem => {
  const simple = SIMPLE[text.toUpperCase()];
  if (simple) return simple;
  const match = BODY_ITEM.exec(text);
  if (!match) throw new ParseError(`unknown fetch attribute ${text.slice(0, 40)}`);
  const section = parseSection(match[2]);
  const partial = match[3] === undefined ? null : { start: Number(match[3]), length: Number(match[4]) };
  if (partial && partial.length === 0) throw new ParseError('a partial fetch needs a length above 0');
  return {
    kind: 'body',
    label: `BODY[${sectionText(section, match[2])}]${partial ? `<${partial.start}>` : ''}`,
    section,
    peek: match[1].toUpperCase() === 'BODY.PEEK',
    partial,
  };
};

const SECTION = /^((?:[1-9]\d{0,4}\.)*[1-9]\d{0,4})?(?:(?:^|\.)(HEADER\.FIELDS\.NOT|HEADER\.FIELDS|HEADER|TEXT|MIME))?(?:\s*\(([^)]*)\))?$/i;

export const parseSection = (text: string): Section => {
  const match = SECTION.exec(text.trim());
  if (!match) throw new ParseError(`invalid section [${text.slice(0, 60)}]`);
  const path = match[1] ? match[1].split('.').map(Number) : [];
  const spec = (match[2]?.toUpperCase() ?? 'ALL') as Section['spec'];
  const hasFields = spec === 'HEADER.FIELDS' || spec === 'HEADER.FIELDS.NOT';
  if (hasFields !== (match[3] !== undefined)) throw new ParseError(`invalid section [${text.slice(0, 60)}]`);
  if (spec === 'MIME' && path.length === 0) throw new ParseError('MIME needs a part number');
  const fields = hasFields
    ? match[3]
        .trim()
        .split(/\s+/)
        .filter(Boolean)
        .map((field) => field.replace(/^"|"$/g, '').toLowerCase())
    : [];
  if (hasFields && fields.length === 0) throw new ParseError('HEADER.FIELDS needs at least one field name');
  return { path, spec, fields };
};

/** The section as the response names it: the client's own field names, spec words uppercased. */
const sectionText = (section: Section, original: string): string => {
  const parts: string[] = [];
  if (section.path.length > 0) parts.push(section.path.join('.'));
  if (section.spec !== 'ALL') parts.push(section.spec);
  const head = parts.join('.');
  const list = /\(([^)]*)\)/.exec(original);
  return list ? `${head} (${list[1].trim().split(/\s+/).join(' ')})` : head;
};
