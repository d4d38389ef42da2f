import type { CheckResult } from '../../core/doctor.js';
import { reverseName, type DnsResolver } from '../../core/dns.js';
import { lookup, tagsOf, txtRecords, withVersion } from './dns-lookups.js';

/** What the DNS checks know of this deployment. */
export interface DnsCheckContext {
  dns: DnsResolver;
  /** `smtp.hostname`: the MX name, the EHLO name, the name a PTR should give. */
  hostname: string;
  /** The addresses outgoing mail leaves from (given, or the host name's). */
  addresses: string[];
}

const plain = (name: string) => name.toLowerCase().replace(/\.$/, '');

/** RFC 5321 section 5.1: other servers deliver to the domain's MX hosts; ours must be one of them. */
export const checkMx = async ({ dns, hostname }: DnsCheckContext, domain: string): Promise<CheckResult> => {
  const base = { check: 'mx', subject: domain };
  const publish = { type: 'MX' as const, name: domain, value: `10 ${hostname}.` };
  const found = await lookup(domain, () => dns.resolveMx(domain));
  if (!found.ok) return { ...base, status: 'fail', detail: found.error };
  const ours = found.records.find((record) => plain(record.exchange) === plain(hostname));
  if (ours) return { ...base, status: 'ok', detail: `${hostname} (preference ${ours.priority})` };
  const others = found.records.map((record) => `${record.exchange || '.'} (${record.priority})`).join(', ');
  return {
    ...base,
    status: 'fail',
    detail: others ? `MX names ${others}, not ${hostname}` : 'no MX record: mail for the domain cannot find this server',
    publish,
  };
};

/** The MX name must resolve, to this server's addresses when they are known. */
export const checkHostAddresses = async ({ dns, hostname, addresses }: DnsCheckContext, given: boolean): Promise<CheckResult> => {
  const base = { check: 'host-address', subject: hostname };
  const [v4, v6] = await Promise.all([lookup(hostname, () => dns.resolve4(hostname)), lookup(hostname, () => dns.resolve6(hostname))]);
  const failed = [v4, v6].find((result) => !result.ok);
  if (failed && !failed.ok) return { ...base, status: 'fail', detail: failed.error };
  const found = [...(v4.ok ? v4.records : []), ...(v6.ok ? v6.records : [])];
  const address = addresses.find((candidate) => !candidate.includes(':')) ?? addresses[0];
  const publish = address ? { type: address.includes(':') ? ('AAAA' as const) : ('A' as const), name: hostname, value: address } : undefined;
  if (found.length === 0) {
    return {
      ...base,
      status: 'fail',
      detail: 'no A or AAAA record',
      ...(publish ? { publish } : { fix: `publish an A record for ${hostname} with this server's public IPv4 address` }),
    };
  }
  const missing = given ? addresses.filter((candidate) => !found.includes(candidate)) : [];
  if (missing.length > 0) return { ...base, status: 'warn', detail: `resolves to ${found.join(', ')}, not to ${missing.join(', ')} given as this server's` };
  return { ...base, status: 'ok', detail: found.join(', ') };
};

/**
 * Forward-confirmed reverse DNS (RFC 8601 section 3 "iprev"): the address's PTR names a host
 * that resolves back to it. Receivers refuse or score down mail from addresses without it;
 * the PTR should be the EHLO name, `smtp.hostname`. The PTR is set by whoever owns the address.
 */
export const checkReverseDns = async ({ dns, hostname }: DnsCheckContext, address: string): Promise<CheckResult> => {
  const base = { check: 'reverse-dns', subject: address };
  const fix = `ask the provider of ${address} to set its reverse DNS (PTR) to ${hostname}`;
  const ptr = await lookup(address, () => dns.resolvePtr(reverseName(address)));
  if (!ptr.ok) return { ...base, status: 'fail', detail: ptr.error, fix };
  if (ptr.records.length === 0) return { ...base, status: 'fail', detail: 'no PTR record', fix };
  const confirmed: string[] = [];
  for (const name of ptr.records) {
    const forward = await lookup(name, async () => [...(await dns.resolve4(name).catch(() => [])), ...(await dns.resolve6(name).catch(() => []))]);
    if (forward.ok && forward.records.includes(address)) confirmed.push(plain(name));
  }
  if (confirmed.includes(plain(hostname))) return { ...base, status: 'ok', detail: `${hostname}, which resolves back to ${address}` };
  if (confirmed.length > 0)
    return { ...base, status: 'warn', detail: `PTR ${confirmed.join(', ')} forward-confirms, but is not ${hostname}, the name this server greets with`, fix };
  return { ...base, status: 'fail', detail: `PTR ${ptr.records.join(', ')} does not resolve back to ${address}`, fix };
};

/** RFC 7489 section 6.1: `_dmarc.<domain>`; p=none only monitors. */
export const checkDmarc = async ({ dns }: DnsCheckContext, domain: string): Promise<CheckResult> => {
  const name = `_dmarc.${domain}`;
  const base = { check: 'dmarc', subject: domain };
  const publish = { type: 'TXT' as const, name, value: 'v=DMARC1; p=quarantine; adkim=r; aspf=r' };
  const found = await txtRecords((n) => dns.resolveTxt(n), name);
  if (!found.ok) return { ...base, status: 'fail', detail: found.error };
  const records = withVersion(found.records, 'v=DMARC1');
  if (records.length === 0)
    return { ...base, status: 'fail', detail: `no DMARC record at ${name}: receivers cannot tell this domain's mail from forgeries`, publish };
  if (records.length > 1)
    return { ...base, status: 'fail', detail: `${records.length} DMARC records at ${name}: receivers ignore them all (RFC 7489 section 6.6.3)`, publish };
  const policy = tagsOf(records[0]).get('p')?.toLowerCase();
  if (!policy || !['none', 'quarantine', 'reject'].includes(policy))
    return { ...base, status: 'fail', detail: `"${records[0]}" has no valid p= policy`, publish };
  if (policy === 'none') return { ...base, status: 'warn', detail: `"${records[0]}": p=none only monitors; forged mail still arrives`, publish };
  return { ...base, status: 'ok', detail: records[0] };
};

/** RFC 8461 section 3.1: `_mta-sts.<domain>` announces a policy (served over HTTPS at mta-sts.<domain>). */
export const checkMtaSts = async ({ dns, hostname }: DnsCheckContext, domain: string, now: Date): Promise<CheckResult> => {
  const name = `_mta-sts.${domain}`;
  const base = { check: 'mta-sts', subject: domain };
  const id = now.toISOString().replace(/\D/g, '').slice(0, 14);
  const publish = { type: 'TXT' as const, name, value: `v=STSv1; id=${id}` };
  const fix = `serve https://mta-sts.${domain}/.well-known/mta-sts.txt with "version: STSv1", "mode: testing", "mx: ${hostname}", "max_age: 604800"`;
  const found = await txtRecords((n) => dns.resolveTxt(n), name);
  if (!found.ok) return { ...base, status: 'warn', detail: found.error };
  const records = withVersion(found.records, 'v=STSv1');
  if (records.length === 0)
    return { ...base, status: 'warn', detail: 'no MTA-STS record: senders may deliver without TLS when an attacker strips STARTTLS', publish, fix };
  if (records.length > 1 || !tagsOf(records[0]).get('id'))
    return { ...base, status: 'warn', detail: `"${records.join('", "')}": exactly one record with an id= is required (RFC 8461 section 3.1)`, publish, fix };
  return { ...base, status: 'ok', detail: records[0] };
};

/** RFC 8460 section 3: `_smtp._tls.<domain>` names where senders report TLS failures. */
export const checkTlsRpt = async ({ dns }: DnsCheckContext, domain: string): Promise<CheckResult> => {
  const name = `_smtp._tls.${domain}`;
  const base = { check: 'tls-rpt', subject: domain };
  const publish = { type: 'TXT' as const, name, value: `v=TLSRPTv1; rua=mailto:postmaster@${domain}` };
  const found = await txtRecords((n) => dns.resolveTxt(n), name);
  if (!found.ok) return { ...base, status: 'warn', detail: found.error };
  const records = withVersion(found.records, 'v=TLSRPTv1');
  if (records.length !== 1 || !tagsOf(records[0]).get('rua')) {
    return {
      ...base,
      status: 'warn',
      detail:
        records.length === 0
          ? 'no TLS-RPT record: nobody hears of TLS failures delivering to you'
          : `"${records.join('", "')}": exactly one record with rua= is required`,
      publish,
    };
  }
  return { ...base, status: 'ok', detail: records[0] };
};
