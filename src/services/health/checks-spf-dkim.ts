import type { CheckResult } from '../../core/doctor.js';
import { resolveByType } from '../../core/dns.js';
import type { DkimService } from '../delivery/dkim.js';
import { loadMailauth } from '../mail/authentication.js';
import type { DnsCheckContext } from './checks-dns.js';
import { tagsOf, txtRecords, withVersion } from './dns-lookups.js';

/**
 * RFC 7208: the domain's SPF record must let this server's addresses send for it. Judged by
 * the same evaluator that judges inbound mail (mailauth), as a receiver would, for each
 * address mail leaves from. Behind a relay, the relay's servers send: only the record's
 * presence can be checked here.
 */
export const checkSpf = async (context: DnsCheckContext, domain: string, relay: string | undefined): Promise<CheckResult> => {
  const { dns, hostname, addresses } = context;
  const base = { check: 'spf', subject: domain };
  const found = await txtRecords((n) => dns.resolveTxt(n), domain);
  if (!found.ok) return { ...base, status: 'fail', detail: found.error };
  const records = withVersion(found.records, 'v=spf1');
  const suggested = { type: 'TXT' as const, name: domain, value: suggestion(records[0], addresses, hostname) };
  if (records.length === 0)
    return { ...base, status: 'fail', detail: 'no SPF record: receivers cannot tell which servers send for the domain', publish: suggested };
  if (records.length > 1)
    return { ...base, status: 'fail', detail: `${records.length} SPF records: receivers treat that as an error (RFC 7208 section 4.5)`, publish: suggested };
  if (relay)
    return {
      ...base,
      status: 'warn',
      detail: `"${records[0]}"; mail leaves through the relay ${relay}, whose servers the record must name (the relay's provider documents the include:)`,
    };
  if (addresses.length === 0)
    return { ...base, status: 'warn', detail: `"${records[0]}"; this server's address is unknown, so whether it may send cannot be checked` };
  const resolver = resolveByType(dns) as never;
  const { spf } = await loadMailauth();
  const refused: string[] = [];
  for (const ip of addresses) {
    const result = await spf({ ip, sender: `postmaster@${domain}`, helo: hostname, mta: hostname, resolver });
    if (result.status.result !== 'pass') refused.push(`${ip} (${result.status.result})`);
  }
  if (refused.length > 0) return { ...base, status: 'fail', detail: `"${records[0]}" does not let ${refused.join(', ')} send`, publish: suggested };
  return { ...base, status: 'ok', detail: `"${records[0]}" lets ${addresses.join(', ')} send` };
};

/** The record with this server's addresses added before its `all` (or a new one ending in -all). */
const suggestion = (existing: string | undefined, addresses: string[], hostname: string): string => {
  const mechanisms = addresses.length > 0 ? addresses.map((ip) => (ip.includes(':') ? `ip6:${ip}` : `ip4:${ip}`)) : [`a:${hostname}`];
  if (!existing) return `v=spf1 ${mechanisms.join(' ')} -all`;
  const terms = existing.trim().split(/\s+/);
  const all = terms.findIndex((term) => /^[-~?+]?all$/i.test(term) || /^redirect=/i.test(term));
  const missing = mechanisms.filter((mechanism) => !terms.includes(mechanism));
  const at = all < 0 ? terms.length : all;
  return [...terms.slice(0, at), ...missing, ...terms.slice(at)].join(' ');
};

/**
 * RFC 6376 section 3.6.2: `<selector>._domainkey.<domain>` must carry the public half of the
 * key that signs the domain's outgoing mail (`agentpost dkim generate`).
 */
export const checkDkim = async ({ dns }: DnsCheckContext, dkim: DkimService, domain: string): Promise<CheckResult> => {
  const base = { check: 'dkim', subject: domain };
  const key = await dkim.record(domain);
  if (!key)
    return {
      ...base,
      status: 'fail',
      detail: 'no DKIM key: outgoing mail is unsigned',
      fix: `run agentpost dkim generate ${domain}, then publish the record it prints`,
    };
  const publish = { type: 'TXT' as const, name: key.recordName, value: key.recordValue };
  const found = await txtRecords((n) => dns.resolveTxt(n), key.recordName);
  if (!found.ok) return { ...base, status: 'fail', detail: found.error, publish };
  const records = withVersion(found.records, 'v=DKIM1').concat(found.records.filter((record) => !/^\s*v\s*=/i.test(record) && /(^|;)\s*p\s*=/i.test(record)));
  if (records.length === 0) return { ...base, status: 'fail', detail: `no DKIM record at ${key.recordName}: receivers cannot verify the signatures`, publish };
  const expected = tagsOf(key.recordValue).get('p');
  if (records.some((record) => tagsOf(record).get('p') === expected))
    return { ...base, status: 'ok', detail: `${key.recordName} carries the signing key (selector ${key.selector})` };
  return { ...base, status: 'fail', detail: `${key.recordName} carries another key than the one that signs (an old key?)`, publish };
};
