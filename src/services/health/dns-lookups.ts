import { dnsErrorCode, isNoRecords } from '../../core/dns.js';

/** A lookup's answer: records (empty when the name or type does not exist), or why there is none. */
export type Lookup<T> = { ok: true; records: T[] } | { ok: false; error: string };

/** NXDOMAIN and NODATA are answers (no records); a timeout or server failure is not. */
export const lookup = async <T>(name: string, query: () => Promise<T[]>): Promise<Lookup<T>> => {
  try {
    return { ok: true, records: await query() };
  } catch (error) {
    if (isNoRecords(error)) return { ok: true, records: [] };
    return { ok: false, error: `the lookup of ${name} failed (${dnsErrorCode(error) ?? (error as Error).message})` };
  }
};

/** TXT records as whole strings: the character-strings of one record joined (RFC 7208 section 3.3, RFC 6376 section 3.6.2.2). */
export const txtRecords = (resolveTxt: (name: string) => Promise<string[][]>, name: string): Promise<Lookup<string>> =>
  lookup(name, async () => (await resolveTxt(name)).map((strings) => strings.join('')));

/** The records that start with a version tag such as `v=spf1` or `v=DMARC1` (case-insensitive, then a space, `;` or the end). */
export const withVersion = (records: string[], version: string): string[] =>
  records.filter((record) => new RegExp(`^\\s*${version.replace('=', '\\s*=\\s*')}(\\s|;|$)`, 'i').test(record));

/** `tag=value` pairs of a DKIM, DMARC, MTA-STS or TLS-RPT record (RFC 6376 section 3.2 tag-list). */
export const tagsOf = (record: string): Map<string, string> =>
  new Map(
    record
      .split(';')
      .map((part) => part.trim())
      .filter((part) => part.includes('='))
      .map((part) => [part.slice(0, part.indexOf('=')).trim().toLowerCase(), part.slice(part.indexOf('=') + 1).replace(/\s+/g, '')]),
  );
