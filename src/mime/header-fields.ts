import { addressparser } from './nodemailer.js';

/** Where the header section ends: the first empty line (CRLF CRLF, or bare LF LF). */
const headerEnd = (raw: Buffer): number => {
  const ends = [raw.indexOf('\r\n\r\n'), raw.indexOf('\n\n')].filter((at) => at !== -1);
  return ends.length === 0 ? raw.length : Math.min(...ends);
};

/**
 * Every occurrence of a header field in the whole header section, unfolded (RFC 5322
 * sections 2.2 and 2.2.3). The whole section is read, however long: a field placed past
 * any cut-off must not escape a check.
 */
export const headerFieldValues = (raw: Buffer, name: string): string[] => {
  const head = raw.toString('latin1', 0, headerEnd(raw));
  const prefix = `${name.toLowerCase()}:`;
  return head
    .split(/\r?\n(?![ \t])/)
    .filter((line) => line.toLowerCase().startsWith(prefix))
    .map((line) =>
      line
        .slice(prefix.length)
        .replace(/\r?\n[ \t]+/g, ' ')
        .trim(),
    );
};

/** The addresses of an address-list field value, groups flattened (RFC 5322 section 3.4). */
export const mailboxesOf = (value: string): string[] => addressparser(value, { flatten: true }).map((entry) => entry.address.trim().toLowerCase());
