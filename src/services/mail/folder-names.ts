import { AppError } from '../../core/errors.js';

/**
 * Folder names as every part of the service sees them: Unicode text (IMAP's modified UTF-7
 * is the adapter's wire form), `/` separating levels of a hierarchy (RFC 3501 section
 * 5.1.1), case-sensitive except INBOX (section 5.1; docs/design.md "folders").
 */
export const INBOX = 'INBOX';
export const SENT = 'Sent';
export const DRAFTS = 'Drafts';
export const TRASH = 'Trash';
export const JUNK = 'Junk';
export const ARCHIVE = 'Archive';
export const DELIMITER = '/';

/**
 * RFC 6154 special-use folders: made when first needed (a client's LIST, a REST delete that
 * moves mail to Trash, a copy of sent mail), each under its fixed name.
 */
export const SPECIAL_USE: ReadonlyMap<string, string> = new Map([
  [SENT, '\\Sent'],
  [DRAFTS, '\\Drafts'],
  [TRASH, '\\Trash'],
  [JUNK, '\\Junk'],
  [ARCHIVE, '\\Archive'],
]);

export const specialUseOf = (name: string): string | null => SPECIAL_USE.get(name) ?? null;

/** INBOX in any case is INBOX, at the top level and as the first level of a deeper name. */
export const canonicalFolderName = (name: string): string => {
  const slash = name.indexOf(DELIMITER);
  const first = slash === -1 ? name : name.slice(0, slash);
  return first.toUpperCase() === INBOX ? INBOX + (slash === -1 ? '' : name.slice(slash)) : name;
};

const MAX_NAME_BYTES = 255;
const MAX_LEVELS = 16;

/** A name a folder may be created with: no empty level, no control or wildcard characters, bounded. */
export const checkedFolderName = (name: string): string => {
  const canonical = canonicalFolderName(name);
  const levels = canonical.split(DELIMITER);
  const invalid = levels.some((level) => level === '') || /[\p{Cc}%*]/u.test(canonical);
  if (invalid)
    throw new AppError('invalid_input', `invalid folder name; levels are separated by "${DELIMITER}" and may not be empty or hold %, * or control characters`);
  if (Buffer.byteLength(canonical) > MAX_NAME_BYTES || levels.length > MAX_LEVELS) {
    throw new AppError('invalid_input', `a folder name is at most ${MAX_NAME_BYTES} bytes and ${MAX_LEVELS} levels`);
  }
  return canonical;
};

/** The names above a name in its hierarchy, outermost first ("a/b/c": "a", "a/b"). */
export const parentsOf = (name: string): string[] => {
  const levels = name.split(DELIMITER);
  return levels.slice(1).map((_level, index) => levels.slice(0, index + 1).join(DELIMITER));
};

/** Whether `name` is below `parent` in the hierarchy. */
export const isBelow = (name: string, parent: string): boolean => name.startsWith(parent + DELIMITER);
