/**
 * The Authentication-Results header field (RFC 8601): building ours, and removing any that
 * claim to be ours before the message is stored (section 5).
 */

/**
 * `Authentication-Results: <authserv-id>;` with one resinfo per line. Result rows carry values
 * from the message (addresses, domains); any CR or LF in them becomes a space, so a row can
 * never start a header field of its own.
 */
export const authenticationResultsField = (authservId: string, rows: string[]): string => {
  const clean = rows.map((row) => row.replace(/[\r\n]+/g, ' ').trim()).filter((row) => row !== '');
  if (clean.length === 0) return `Authentication-Results: ${authservId}; none\r\n`;
  return `Authentication-Results: ${authservId};\r\n\t${clean.join(';\r\n\t')}\r\n`;
};

/**
 * RFC 8601 section 5: a receiving MTA removes Authentication-Results fields whose authserv-id
 * is its own, since only it may write them and these came from outside. Other fields, and the
 * bytes of the rest of the message, stay exactly as received (DKIM signatures cover them).
 * Returns the input itself when there is nothing to remove.
 */
export const withoutForgedAuthenticationResults = (raw: Buffer, authservId: string): Buffer => {
  const headerEnd = headerSectionEnd(raw);
  const header = raw.subarray(0, headerEnd).toString('latin1');
  if (!/^authentication-results[ \t]*:/im.test(header)) return raw;
  const own = authservId.toLowerCase();
  const fields = splitFields(header);
  const kept = fields.filter((field) => !isAuthResultsOf(field, own));
  if (kept.length === fields.length) return raw;
  return Buffer.concat([Buffer.from(kept.join(''), 'latin1'), raw.subarray(headerEnd)]);
};

/** Offset just past the header section's last field (the empty line stays with the body). */
const headerSectionEnd = (raw: Buffer): number => {
  const crlf = raw.indexOf('\r\n\r\n');
  const lf = raw.indexOf('\n\n');
  if (crlf >= 0 && (lf < 0 || crlf < lf)) return crlf + 2;
  if (lf >= 0) return lf + 1;
  return raw.length;
};

/** Header fields with their line endings; a line starting with a space or tab continues the field before it. */
const splitFields = (header: string): string[] => {
  const fields: string[] = [];
  for (const line of header.split(/(?<=\n)/)) {
    if (fields.length > 0 && /^[ \t]/.test(line)) fields[fields.length - 1] += line;
    else fields.push(line);
  }
  return fields;
};

const isAuthResultsOf = (field: string, authservId: string): boolean => {
  const match = field.match(/^authentication-results[ \t]*:([\s\S]*)$/i);
  return match !== null && authservIdOf(match[1]) === authservId;
};

/**
 * The authserv-id: the first value after optional CFWS, a token or a quoted-string
 * (RFC 8601 section 2.2), compared case-insensitively (section 2.5).
 */
export const authservIdOf = (value: string): string | null => {
  const text = stripComments(value).trim();
  const quoted = text.match(/^"((?:[^"\\]|\\.)*)"/);
  if (quoted) return quoted[1].replace(/\\(.)/g, '$1').toLowerCase();
  const token = text.match(/^[^\s;()"]+/);
  return token ? token[0].toLowerCase() : null;
};

/** Removes RFC 5322 comments (nested parentheses, with quoted-pairs); quoted-strings stay whole. */
const stripComments = (value: string): string => {
  let out = '';
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < value.length; i += 1) {
    const char = value[i];
    if (char === '\\' && (depth > 0 || quoted)) {
      if (depth === 0) out += char + (value[i + 1] ?? '');
      i += 1;
    } else if (quoted) {
      out += char;
      if (char === '"') quoted = false;
    } else if (char === '(') depth += 1;
    else if (char === ')' && depth > 0) depth -= 1;
    else if (depth === 0) {
      out += char;
      if (char === '"') quoted = true;
    }
  }
  return out;
};
