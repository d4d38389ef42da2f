import { isIP } from 'node:net';
import type { AcmeStatusSource, CertificateSource } from '../../core/certificates.js';
import type { Clock } from '../../core/clock.js';
import type { CheckResult, DoctorReport, PortProbe } from '../../core/doctor.js';
import type { DnsResolver } from '../../core/dns.js';
import { invalidInput } from '../../core/errors.js';
import type { DkimService } from '../delivery/dkim.js';
import { checkDmarc, checkHostAddresses, checkMtaSts, checkMx, checkReverseDns, checkTlsRpt, type DnsCheckContext } from './checks-dns.js';
import { checkAcme } from './acme-status.js';
import { checkCertificate, checkListeners, checkMxReachable, type ListenerSpec } from './checks-listeners.js';
import { checkPostmaster } from './checks-postmaster.js';
import { checkDkim, checkSpf } from './checks-spf-dkim.js';
import type { RuntimeProbe } from './status.js';

export interface DoctorConfig {
  mailDomain: string;
  /** `smtp.hostname`: the MX name, EHLO name and certificate name. */
  hostname: string;
  /** `outbound.relay`: when set, the relay's servers send, not this one. */
  relay?: string;
  /** Every listener, the MX (`smtp`) among them. */
  listeners: ListenerSpec[];
}

export interface DoctorRequest {
  /** The domains to check; default `mailDomain` and every verified domain. */
  domains?: string[];
  /** The public addresses mail leaves from; default the host name's A and AAAA records. */
  addresses?: string[];
  /**
   * When `domains` is not given: the verified domains checked beside `mailDomain`. Default
   * every verified domain (the operator's CLI); the console passes the signed-in owner's own,
   * as one owner must not learn another's domains.
   */
  verifiedDomains?: string[];
}

const DOMAIN = /^(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))+$/;

/**
 * `agentpost doctor` and the console's Health page: what a deployment needs to send and
 * receive mail on the Internet, checked from here. Each check says ok, warn or fail, and for a
 * fix in DNS the exact record to publish. Every lookup goes through the service's resolver.
 */
export class DoctorService {
  constructor(
    private readonly dns: DnsResolver,
    private readonly dkim: DkimService,
    private readonly clock: Clock,
    private readonly probe: PortProbe,
    /** The certificate files served, and what the ACME client reported (null without ACME). */
    private readonly certificates: { files: CertificateSource; acme: AcmeStatusSource },
    private readonly config: DoctorConfig,
    /** In `serve`, the ports actually bound (a configured 0 picks one); the CLI has none and uses the configured ones. */
    private readonly runtime: RuntimeProbe,
    /** The domains owners added and verified: checked with `mailDomain` when none are named. */
    private readonly verifiedDomains: () => Promise<string[]> = async () => [],
    /** The mailbox that receives mail to an address, or null when it is refused (inbound's rule). */
    private readonly receivedBy: (address: string) => Promise<string | null> = async () => null,
  ) {}

  async run(request: DoctorRequest = {}): Promise<DoctorReport> {
    const domains = await this.domainsOf(request.domains, request.verifiedDomains);
    const given = (request.addresses ?? []).length > 0;
    const addresses = given ? this.addressesOf(request.addresses ?? []) : await this.hostAddresses();
    const context: DnsCheckContext = { dns: this.dns, hostname: this.config.hostname, addresses };
    const now = this.clock.now();
    const perDomain = await this.domainChecks(context, domains, now);
    const bound = this.runtime.listeners();
    const listeners = this.config.listeners.map((listener) => ({ ...listener, port: bound[listener.name]?.port || listener.port }));
    const smtp = listeners.find((listener) => listener.name === 'smtp');
    const checks: CheckResult[] = [
      await checkHostAddresses(context, given),
      // Behind a relay the relay's addresses send; their reverse DNS is the relay's business.
      ...(this.config.relay ? [] : await Promise.all(addresses.map((address) => checkReverseDns(context, address)))),
      ...perDomain,
      ...(await this.certificateChecks(now)),
      ...(await checkListeners(this.probe, listeners, this.config.hostname)),
      ...(smtp ? await checkMxReachable(this.probe, smtp, this.config.hostname, addresses) : []),
    ];
    return { ok: !checks.some((check) => check.status === 'fail'), checks };
  }

  /**
   * The checks of a holder's own domains only (the console's Health page for an owner who does
   * not operate the service): their records, never the listeners, certificate files or host.
   */
  async runForDomains(domains: readonly string[]): Promise<DoctorReport> {
    if (domains.length === 0) return { ok: true, checks: [] };
    const context: DnsCheckContext = { dns: this.dns, hostname: this.config.hostname, addresses: await this.hostAddresses() };
    const checks = await this.domainChecks(context, await this.domainsOf([...domains], undefined), this.clock.now());
    return { ok: !checks.some((check) => check.status === 'fail'), checks };
  }

  private async domainChecks(context: DnsCheckContext, domains: readonly string[], now: Date): Promise<CheckResult[]> {
    const perDomain = await Promise.all(
      await Promise.all(
        domains.map(async (domain) =>
          Promise.all([
            checkMx(context, domain),
            checkSpf(context, domain, this.config.relay),
            checkDkim(context, this.dkim, domain),
            checkDmarc(context, domain),
            checkMtaSts(context, domain, now),
            checkTlsRpt(context, domain),
            await checkPostmaster(domain, this.config.mailDomain, this.receivedBy),
          ]),
        ),
      ),
    );
    return perDomain.flat();
  }

  /** With ACME, no certificate yet is the acme line's to explain, and renewing is agentpost's job. */
  private async certificateChecks(now: Date): Promise<CheckResult[]> {
    const acme = await this.certificates.acme().catch(() => null);
    const certificate = await checkCertificate(this.certificates.files, this.config.hostname, now, acme !== null);
    return acme ? [...certificate, checkAcme(acme, certificate.length > 0)] : certificate;
  }

  private async domainsOf(input: string[] | undefined, verified: string[] | undefined): Promise<string[]> {
    const domains = (input && input.length > 0 ? input : [this.config.mailDomain, ...(verified ?? (await this.verifiedDomains()))]).map((domain) =>
      domain.trim().toLowerCase().replace(/\.$/, ''),
    );
    const bad = domains.find((domain) => !DOMAIN.test(domain));
    if (bad !== undefined) throw invalidInput('domains', `"${bad}" is not a domain name`);
    return [...new Set(domains)];
  }

  private addressesOf(input: string[]): string[] {
    const bad = input.find((address) => isIP(address) === 0);
    if (bad !== undefined) throw invalidInput('addresses', `"${bad}" is not an IP address`);
    return [...new Set(input)];
  }

  /** The host name's own addresses: where other servers see this one (unless told otherwise). */
  private async hostAddresses(): Promise<string[]> {
    const { hostname } = this.config;
    const [v4, v6] = await Promise.all([this.dns.resolve4(hostname).catch(() => []), this.dns.resolve6(hostname).catch(() => [])]);
    return [...v4, ...v6];
  }
}
