import { ParseError } from './parser.js';

/**
 * Folder names on the wire are in modified UTF-7 (RFC 3501 section 5.1.3): printable ASCII
 * as itself ("&" as "&-"), other characters as "&", modified BASE64 of their UTF-16BE
 * ("," for "/", no padding) and "-". The service keeps names as Unicode.
 */
export const encodeMailboxName = (name: string): string => {
  let out = '';
  let run = '';
  const flush = () => {
    if (run === '') return;
    const utf16 = Buffer.from(run, 'utf16le').swap16();
    out += `&${utf16.toString('base64').replace(/=+$/, '').replaceAll('/', ',')}-`;
    run = '';
  };
  for (const char of name) {
    const code = char.codePointAt(0) as number;
    if (code >= 0x20 && code <= 0x7e) {
      flush();
      out += char === '&' ? '&-' : char;
    } else {
      run += char;
    }
  }
  flush();
  return out;
};

export const decodeMailboxName = (wire: string): string => {
  if (!wire.includes('&')) return wire;
  return wire.replace(/&([^-]*)-/g, (_match, encoded: string) => {
    if (encoded === '') return '&';
    if (!/^[A-Za-z0-9+,]+$/.test(encoded)) throw new ParseError('invalid modified UTF-7 in a folder name');
    const bytes = Buffer.from(encoded.replaceAll(',', '/'), 'base64');
    if (bytes.length % 2 !== 0) throw new ParseError('invalid modified UTF-7 in a folder name');
    return Buffer.from(bytes).swap16().toString('utf16le');
  });
};
