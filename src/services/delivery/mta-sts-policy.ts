import type { StsPolicy } from '../../core/mta-sts.js';

/**
 * MTA-STS (RFC 8461): the TXT record that announces a policy, the policy file, and the MX
 * patterns a policy allows. Pure functions; the service does the lookups and the caching.
 */

/** RFC 8461 section 3.2: max_age is at most one year. */
export const MAX_AGE_LIMIT = 31_557_600;

/**
 * The `_mta-sts.<domain>` TXT answer (section 3.1): records not starting with `v=STSv1` are
 * ignored; exactly one must remain, and it must carry `id` (1 to 32 letters and digits).
 * Returns its id, or null when the domain announces no usable policy.
 */
export const stsRecordId = (records: string[][]): string | null => {
  const candidates = records.map((strings) => strings.join('')).filter((record) => /^v=STSv1\s*(;|$)/.test(record));
  if (candidates.length !== 1) return null;
  const fields = new Map<string, string>();
  for (const part of candidates[0].split(';')) {
    const field = part.trim();
    if (field === '') continue;
    // sts-field: a name of letters, digits, "_", "-", "." and a value without "=", ";" or spaces.
    const match = /^([a-zA-Z0-9][a-zA-Z0-9_.-]{0,31})=([\x21-\x3a\x3c\x3e-\x7e]{1,256})$/.exec(field);
    if (!match) return null;
    if (!fields.has(match[1])) fields.set(match[1], match[2]);
  }
  const id = fields.get('id');
  return id !== undefined && /^[a-zA-Z0-9]{1,32}$/.test(id) ? id : null;
};

/**
 * The policy file (section 3.2): `key: value` lines ending in LF or CRLF; `version: STSv1`,
 * `mode`, `max_age` and, unless the mode is none, at least one `mx`. Unknown keys are
 * ignored; the first of a repeated key counts, except `mx`, which may repeat. Throws with
 * the reason when the file is not a valid policy.
 */
export const parsePolicy = (text: string, id: string): StsPolicy => {
  const values = new Map<string, string>();
  const mx: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === '') continue;
    const match = /^([a-zA-Z0-9_]+):[ \t]*(.*?)[ \t]*$/.exec(line);
    if (!match) throw new Error(`not a policy line: ${JSON.stringify(line.slice(0, 80))}`);
    const [, key, value] = match;
    if (key === 'mx') mx.push(value.toLowerCase().replace(/\.$/, ''));
    else if (!values.has(key)) values.set(key, value);
  }
  if (values.get('version') !== 'STSv1') throw new Error('version is not STSv1');
  const mode = values.get('mode');
  if (mode !== 'enforce' && mode !== 'testing' && mode !== 'none') throw new Error(`mode is ${mode === undefined ? 'missing' : `"${mode}"`}`);
  const maxAge = values.get('max_age');
  if (maxAge === undefined || !/^\d{1,10}$/.test(maxAge) || Number(maxAge) > MAX_AGE_LIMIT)
    throw new Error('max_age is not a number of seconds up to 31557600');
  if (mode !== 'none' && mx.length === 0) throw new Error('no mx line');
  if (mx.some((pattern) => !isPattern(pattern))) throw new Error('an mx line is not a host name or *.domain');
  return { id, mode, mx, maxAge: Number(maxAge) };
};

const LABEL = '(?!-)[a-z0-9-]{1,63}(?<!-)';
const PATTERN = new RegExp(`^(\\*\\.)?${LABEL}(\\.${LABEL})+$`);
const isPattern = (pattern: string): boolean => PATTERN.test(pattern);

/**
 * Section 4.1: an MX host matches a pattern equal to it, or `*.domain` when the host is one
 * label more than the domain ("*.example.com" matches "mx1.example.com", not "a.b.example.com").
 */
export const mxMatches = (policy: StsPolicy, host: string): boolean => {
  const name = host.toLowerCase().replace(/\.$/, '');
  return policy.mx.some((pattern) => {
    if (!pattern.startsWith('*.')) return pattern === name;
    const dot = name.indexOf('.');
    return dot > 0 && name.slice(dot + 1) === pattern.slice(2);
  });
};
