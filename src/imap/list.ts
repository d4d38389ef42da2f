import { DELIMITER, INBOX, isBelow, specialUseOf } from '../services/mail/folder-names.js';
import { decodeMailboxName } from './mutf7.js';
import { asAtom, asList, asString, ParseError, type Token } from './parser.js';

/** A LIST command (RFC 3501 section 6.3.8, extended by RFC 5258, RFC 6154 and RFC 5819). */
export interface ListRequest {
  selectSubscribed: boolean;
  recursiveMatch: boolean;
  selectSpecialUse: boolean;
  /** Return options; `subscribed` and `children` as RFC 5258 section 3.2 defines them. */
  returnSubscribed: boolean;
  returnChildren: boolean;
  returnSpecialUse: boolean;
  /** LIST-EXTENDED syntax (options or several patterns): attributes then come as the options ask (as Dovecot answers). */
  extended: boolean;
  status: string[] | null;
  reference: string;
  patterns: string[];
}

const SELECT = new Set(['SUBSCRIBED', 'REMOTE', 'RECURSIVEMATCH', 'SPECIAL-USE']);
const RETURN = new Set(['SUBSCRIBED', 'CHILDREN', 'SPECIAL-USE', 'STATUS']);

export const parseList = (args: Token[]): ListRequest => {
  let at = 0;
  const select = args[0]?.type === 'list' ? asList(args[at++], 'selection options').map((item) => asAtom(item, 'a selection option').toUpperCase()) : [];
  const unknown = select.find((option) => !SELECT.has(option));
  if (unknown) throw new ParseError(`unknown LIST selection option ${unknown.slice(0, 30)}`);
  if (select.includes('RECURSIVEMATCH') && select.length === 1) throw new ParseError('RECURSIVEMATCH needs another selection option (RFC 5258)');
  const reference = asString(args[at++], 'a reference name');
  const patternToken = args[at++];
  const patterns =
    patternToken?.type === 'list' ? patternToken.items.map((item) => asString(item, 'a mailbox pattern')) : [asString(patternToken, 'a mailbox pattern')];
  const request: ListRequest = {
    selectSubscribed: select.includes('SUBSCRIBED'),
    recursiveMatch: select.includes('RECURSIVEMATCH'),
    selectSpecialUse: select.includes('SPECIAL-USE'),
    returnSubscribed: false,
    returnChildren: false,
    returnSpecialUse: false,
    status: null,
    extended: select.length > 0 || patternToken?.type === 'list' || at < args.length,
    reference: decodeMailboxName(reference),
    patterns: patterns.map(decodeMailboxName),
  };
  if (at < args.length) {
    if (asAtom(args[at++], 'RETURN').toUpperCase() !== 'RETURN') throw new ParseError('expected RETURN (options)');
    readReturn(asList(args[at++], 'return options'), request);
  }
  if (at !== args.length) throw new ParseError('unexpected arguments after LIST');
  return request;
};

const readReturn = (items: Token[], request: ListRequest): void => {
  for (let index = 0; index < items.length; index += 1) {
    const option = asAtom(items[index], 'a return option').toUpperCase();
    if (!RETURN.has(option)) throw new ParseError(`unknown LIST return option ${option.slice(0, 30)}`);
    if (option === 'SUBSCRIBED') request.returnSubscribed = true;
    if (option === 'CHILDREN') request.returnChildren = true;
    if (option === 'SPECIAL-USE') request.returnSpecialUse = true;
    if (option === 'STATUS') {
      index += 1;
      request.status = asList(items[index], 'status items').map((item) => asAtom(item, 'a status item').toUpperCase());
    }
  }
};

/** RFC 3501 section 6.3.8: `*` matches anything, `%` anything but the delimiter; INBOX in any case. */
export const patternMatcher = (reference: string, pattern: string): ((name: string) => boolean) => {
  const full =
    pattern.startsWith(DELIMITER) || reference === '' ? pattern : reference.endsWith(DELIMITER) ? reference + pattern : `${reference}${DELIMITER}${pattern}`;
  const source = [...full].map((char) => (char === '*' ? '.*' : char === '%' ? '[^/]*' : char.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('');
  const exact = new RegExp(`^${source}$`, 'u');
  const inbox = new RegExp(`^${source}$`, 'iu');
  return (name) => (name === INBOX || name.startsWith(`${INBOX}${DELIMITER}`) ? inbox.test(name) || exact.test(name) : exact.test(name));
};

export interface ListedFolder {
  name: string;
  attributes: string[];
  /** RFC 5258 CHILDINFO: a child matches the selection though this one may not. */
  childInfo: boolean;
  exists: boolean;
}

/**
 * The folders a LIST answers with and their attributes: \HasChildren or \HasNoChildren
 * (RFC 3348), \Subscribed and \NonExistent (RFC 5258), the special-use attribute (RFC 6154).
 */
export const listFolders = (request: ListRequest, existing: readonly string[], subscribed: ReadonlySet<string>): ListedFolder[] => {
  const matchers = request.patterns.map((pattern) => patternMatcher(request.reference, pattern));
  const matches = (name: string) => matchers.some((matcher) => matcher(name));
  const exists = new Set(existing);
  const candidates = request.selectSubscribed ? [...new Set([...subscribed, ...existing.filter((name) => subscribed.has(name))])] : [...existing];
  const selected = (name: string) => (!request.selectSubscribed || subscribed.has(name)) && (!request.selectSpecialUse || specialUseOf(name) !== null);
  const out = new Map<string, ListedFolder>();
  for (const name of candidates) {
    if (!matches(name) || !selected(name)) continue;
    out.set(name, describe(name, exists, subscribed, request, false));
  }
  if (request.recursiveMatch) {
    for (const name of existing) {
      if (!matches(name)) continue;
      const childMatches = candidates.some((other) => isBelow(other, name) && selected(other));
      if (!childMatches) continue;
      const listed = out.get(name);
      if (listed) listed.childInfo = true;
      else out.set(name, { ...describe(name, exists, subscribed, request, true), attributes: [], childInfo: true });
    }
  }
  return [...out.values()].sort((a, b) => (a.name === INBOX ? -1 : b.name === INBOX ? 1 : existing.indexOf(a.name) - existing.indexOf(b.name)));
};

const describe = (name: string, exists: ReadonlySet<string>, subscribed: ReadonlySet<string>, request: ListRequest, childInfo: boolean): ListedFolder => {
  const attributes: string[] = [];
  if (!exists.has(name)) attributes.push('\\NonExistent');
  else if (!request.extended || request.returnChildren)
    attributes.push([...exists].some((other) => isBelow(other, name)) ? '\\HasChildren' : '\\HasNoChildren');
  if ((request.returnSubscribed || request.selectSubscribed) && subscribed.has(name)) attributes.push('\\Subscribed');
  const specialUse = specialUseOf(name);
  if (specialUse && exists.has(name) && (!request.extended || request.returnSpecialUse || request.selectSpecialUse)) attributes.push(specialUse);
  return { name, attributes, childInfo, exists: exists.has(name) };
};
