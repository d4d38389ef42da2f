import { dnsErrorCode, isNoRecords, type DnsResolver } from '../../core/dns.js';
import type { ExpectedRecord } from './records.js';

/** One independent result per published record (docs/design.md "Domain shapes": verify). */
export interface CheckResult {
  type: ExpectedRecord['type'];
  name: string;
  expected: string;
  /** What DNS answered for that name and type (TXT strings joined), in the answer's order. */
  found: string[];
  ok: boolean;
  detail: string;
}

/** A result, and whether its answer was definite (a timeout or server failure is not). */
export interface Checked {
  record: ExpectedRecord;
  result: CheckResult;
  definite: boolean;
}

type Lookup<T> = { ok: true; records: T[] } | { ok: false; definite: boolean; detail: string };

const plain = (name: string): string => name.toLowerCase().replace(/\.$/, '');

/** Reads a failed lookup: NXDOMAIN and NODATA are answers; anything else says nothing about the zone. */
const lookup = async <T>(type: string, name: string, query: () => Promise<T[]>): Promise<Lookup<T>> => {
  try {
    return { ok: true, records: await query() };
  } catch (error) {
    const code = dnsErrorCode(error) ?? 'error';
    if (code === 'ENOTFOUND') return { ok: false, definite: true, detail: `${name} does not exist (NXDOMAIN)` };
    if (code === 'ENODATA') return { ok: false, definite: true, detail: `${name} has no ${type} record` };
    if (code === 'ETIMEOUT')
      return { ok: false, definite: false, detail: `the DNS servers did not answer the ${type} query for ${name} in time; try again later` };
    return { ok: false, definite: isNoRecords(error), detail: `the ${type} lookup of ${name} failed (${code}); try again later` };
  }
};

/** TXT records, each joined from its character-strings (RFC 7208 section 3.3, RFC 6376 section 3.6.2.2). */
const txt = (dns: DnsResolver, name: string) => lookup('TXT', name, async () => (await dns.resolveTxt(name)).map((strings) => strings.join('')));

/** Tag-value list (RFC 6376 section 3.2), as DKIM, DMARC, MTA-STS and TLS-RPT records write them. */
const tagsOf = (record: string): Map<string, string> =>
  new Map(
    record
      .split(';')
      .map((part) => part.trim())
      .filter((part) => part.includes('='))
      .map((part) => [part.slice(0, part.indexOf('=')).trim().toLowerCase(), part.slice(part.indexOf('=') + 1).trim()]),
  );

const withVersion = (records: string[], version: string): string[] =>
  records.filter(
    (record) =>
      record
        .trim()
        .toLowerCase()
        .split(/\s*;\s*|\s+/)[0] === version.toLowerCase(),
  );

type Verdict = { ok: boolean; detail: string };
type Judge = (found: string[], record: ExpectedRecord) => Verdict;

const judgeOwnership: Judge = (found, record) =>
  found.includes(record.value)
    ? { ok: true, detail: 'the ownership token is published' }
    : {
        ok: false,
        detail: found.length === 0 ? `no TXT record at ${record.name}` : `none of the ${found.length} TXT record(s) at ${record.name} is the expected value`,
      };

const judgeSpf: Judge = (found, record) => {
  const spf = withVersion(found, 'v=spf1');
  if (spf.length === 0) return { ok: false, detail: `no SPF record (v=spf1) at ${record.name}` };
  if (spf.length > 1)
    return { ok: false, detail: `${spf.length} SPF records: receivers treat that as a permanent error (RFC 7208 section 4.5); merge them into one` };
  const terms = spf[0].toLowerCase().split(/\s+/);
  const missing = record.value
    .toLowerCase()
    .split(/\s+/)
    .slice(1, -1)
    .filter((term) => !terms.includes(term));
  return missing.length === 0
    ? { ok: true, detail: 'the SPF record names this service' }
    : { ok: false, detail: `the SPF record does not name ${missing.join(' ')}` };
};

const judgeDkim: Judge = (found, record) => {
  const wanted = tagsOf(record.value).get('p');
  const keys = found.flatMap((value) => tagsOf(value).get('p')?.replace(/\s+/g, '') ?? []);
  if (wanted !== undefined && keys.includes(wanted)) return { ok: true, detail: "the record carries the domain's signing key" };
  return { ok: false, detail: keys.length === 0 ? `no DKIM key record at ${record.name}` : `the record at ${record.name} carries another public key` };
};

const judgeDmarc: Judge = (found, record) => {
  const dmarc = withVersion(found, 'v=DMARC1');
  if (dmarc.length !== 1)
    return {
      ok: false,
      detail: dmarc.length === 0 ? `no DMARC record at ${record.name}` : `${dmarc.length} DMARC records: receivers ignore them all (RFC 7489 section 6.6.3)`,
    };
  const policy = tagsOf(dmarc[0]).get('p')?.toLowerCase();
  if (policy === 'quarantine' || policy === 'reject') return { ok: true, detail: `policy p=${policy}` };
  return {
    ok: false,
    detail: policy === 'none' ? 'p=none only monitors: forged mail still arrives; p=quarantine is suggested' : 'the record has no valid p= policy',
  };
};

/** MTA-STS and TLS-RPT: exactly one record of the version, with the tag that makes it useful. */
const judgeVersioned =
  (version: string, tag: string, rfc: string): Judge =>
  (found, record) => {
    const records = withVersion(found, version);
    if (records.length === 1 && tagsOf(records[0]).get(tag)) return { ok: true, detail: records[0] };
    return {
      ok: false,
      detail: records.length === 0 ? `no ${version} record at ${record.name}` : `exactly one ${version} record with ${tag}= is required (${rfc})`,
    };
  };

const TXT_JUDGES: Partial<Record<ExpectedRecord['kind'], Judge>> = {
  ownership: judgeOwnership,
  spf: judgeSpf,
  dkim: judgeDkim,
  dmarc: judgeDmarc,
  'mta-sts': judgeVersioned('v=STSv1', 'id', 'RFC 8461 section 3.1'),
  'tls-rpt': judgeVersioned('v=TLSRPTv1', 'rua', 'RFC 8460 section 3'),
};

const checkTxt = async (dns: DnsResolver, record: ExpectedRecord, judge: Judge): Promise<Checked> => {
  const answer = await txt(dns, record.name);
  const found = answer.ok ? answer.records : [];
  // NXDOMAIN and NODATA are "nothing published": judged like an empty answer, with the DNS reason.
  const verdict = answer.ok || answer.definite ? judge(found, record) : { ok: false, detail: answer.detail };
  const detail = !answer.ok && answer.definite && !verdict.ok ? answer.detail : verdict.detail;
  return { record, result: resultOf(record, found, verdict.ok, detail), definite: answer.ok || answer.definite };
};

/** RFC 5321 section 5.1: senders try the lowest preference first, so ours must be among those. */
const checkMx = async (dns: DnsResolver, record: ExpectedRecord, hostname: string): Promise<Checked> => {
  const answer = await lookup('MX', record.name, () => dns.resolveMx(record.name));
  if (!answer.ok) return { record, result: resultOf(record, [], false, answer.detail), definite: answer.definite };
  const found = [...answer.records].sort((a, b) => a.priority - b.priority).map((mx) => `${mx.priority} ${plain(mx.exchange) || '.'}`);
  const ours = answer.records.filter((mx) => plain(mx.exchange) === plain(hostname));
  const best = Math.min(...answer.records.map((mx) => mx.priority));
  const verdict =
    ours.length === 0
      ? { ok: false, detail: found.length === 0 ? 'no MX record' : `the MX records do not name ${hostname}` }
      : ours.some((mx) => mx.priority === best)
        ? { ok: true, detail: `${hostname} receives the domain's mail` }
        : { ok: false, detail: `${hostname} has preference ${ours[0].priority}, but senders try ${found[0]} first` };
  return { record, result: resultOf(record, found, verdict.ok, verdict.detail), definite: true };
};

/** The policy host: a CNAME to our host name, or addresses that are our host name's. */
const checkPolicyHost = async (dns: DnsResolver, record: ExpectedRecord, hostname: string): Promise<Checked> => {
  const cname = await lookup('CNAME', record.name, () => dns.resolveCname(record.name));
  if (cname.ok && cname.records.some((target) => plain(target) === plain(hostname))) {
    return { record, result: resultOf(record, cname.records, true, `points at ${hostname}`), definite: true };
  }
  const [theirs, ours] = await Promise.all([
    lookup('A/AAAA', record.name, () => dns.resolveAddresses(record.name)),
    lookup('A/AAAA', hostname, () => dns.resolveAddresses(hostname)),
  ]);
  const found = cname.ok ? cname.records : theirs.ok ? theirs.records : [];
  if (theirs.ok && ours.ok && theirs.records.some((address) => ours.records.includes(address))) {
    return { record, result: resultOf(record, found, true, `resolves to ${hostname}'s address`), definite: true };
  }
  const failed = [cname, theirs].find((answer) => !answer.ok && !answer.definite);
  if (failed && !failed.ok) return { record, result: resultOf(record, found, false, failed.detail), definite: false };
  const detail = cname.ok
    ? `points at ${cname.records.join(', ')}, not ${hostname}`
    : !theirs.ok
      ? theirs.detail
      : `resolves to ${theirs.records.join(', ')}, not to ${hostname}`;
  return { record, result: resultOf(record, found, false, detail), definite: true };
};

const resultOf = (record: ExpectedRecord, found: string[], ok: boolean, detail: string): CheckResult => ({
  type: record.type,
  name: record.name,
  expected: record.value,
  found,
  ok,
  detail,
});

/** Looks every record up at once; each result stands alone, and a failed lookup is a result, never an error. */
export const checkRecords = (dns: DnsResolver, records: readonly ExpectedRecord[], hostname: string): Promise<Checked[]> =>
  Promise.all(
    records.map((record) => {
      if (record.kind === 'mx') return checkMx(dns, record, hostname);
      if (record.kind === 'mta-sts-host') return checkPolicyHost(dns, record, hostname);
      return checkTxt(dns, record, TXT_JUDGES[record.kind] as Judge);
    }),
  );
