/**
 * The DNS records a custom domain publishes, exactly as the holder must enter them. Pure: the
 * domain's own values (token, DKIM key, MTA-STS id) and the deployment's settings in, records out.
 */

export type RecordKind = 'ownership' | 'mx' | 'spf' | 'dkim' | 'dmarc' | 'mta-sts' | 'mta-sts-host' | 'tls-rpt';

export interface DnsRecord {
  type: 'TXT' | 'MX' | 'CNAME';
  /** Fully qualified, without the trailing dot. */
  name: string;
  /** TXT: the whole text (a zone may split it into 255-octet strings; they are read joined). MX: "<preference> <host>". */
  value: string;
  purpose: string;
}

/** A record with what its check looks for. */
export interface ExpectedRecord extends DnsRecord {
  kind: RecordKind;
  /** Only ownership and MX decide whether the domain is verified. */
  required: boolean;
}

export interface DomainValues {
  domain: string;
  ownershipToken: string;
  dkimSelector: string;
  dkimPublicKey: string;
  mtaStsId: string;
  /** Where TLS failure reports go (RFC 8460): the holder's own mailbox. */
  reportAddress: string;
}

export interface RecordSettings {
  /** `smtp.hostname`: the MX target and the MTA-STS policy host. */
  hostname: string;
  /** The SPF mechanisms that name where mail leaves from (`domains.spf`, or derived). */
  spfMechanisms: string;
}

/** RFC 7489 section 6.3; relaxed alignment lets mail from subdomains pass too. */
export const DMARC_VALUE = 'v=DMARC1; p=quarantine; adkim=r; aspf=r';
export const MX_PREFERENCE = 10;
export const OWNERSHIP_PREFIX = 'agentpost-verification=';

export const ownershipName = (domain: string): string => `_agentpost.${domain}`;

export const expectedRecords = (values: DomainValues, settings: RecordSettings): ExpectedRecord[] => {
  const { domain, hostname } = { ...values, ...settings };
  return [
    {
      kind: 'ownership',
      required: true,
      type: 'TXT',
      name: ownershipName(domain),
      value: `${OWNERSHIP_PREFIX}${values.ownershipToken}`,
      purpose: 'proves that you control the domain; required for verification',
    },
    {
      kind: 'mx',
      required: true,
      type: 'MX',
      name: domain,
      value: `${MX_PREFERENCE} ${hostname}`,
      purpose:
        'delivers mail for the domain to this service (RFC 5321 section 5.1); required for verification. Remove other MX records, or give them a higher preference number',
    },
    {
      kind: 'spf',
      required: false,
      type: 'TXT',
      name: domain,
      value: `v=spf1 ${settings.spfMechanisms} -all`,
      purpose:
        'tells receivers which servers may send mail from the domain (RFC 7208); a domain has one SPF record, so merge these mechanisms into an existing one',
    },
    {
      kind: 'dkim',
      required: false,
      type: 'TXT',
      name: `${values.dkimSelector}._domainkey.${domain}`,
      value: `v=DKIM1; k=rsa; p=${values.dkimPublicKey}`,
      purpose: "the public half of the domain's own signing key: mail sent from the domain is DKIM-signed with it (RFC 6376 section 3.6.1)",
    },
    {
      kind: 'dmarc',
      required: false,
      type: 'TXT',
      name: `_dmarc.${domain}`,
      value: DMARC_VALUE,
      purpose: 'asks receivers to quarantine mail that fails both SPF and DKIM alignment (RFC 7489); p=quarantine is suggested',
    },
    {
      kind: 'mta-sts',
      required: false,
      type: 'TXT',
      name: `_mta-sts.${domain}`,
      value: `v=STSv1; id=${values.mtaStsId}`,
      purpose: `announces the MTA-STS policy (RFC 8461 section 3.1) that this service serves at https://mta-sts.${domain}/.well-known/mta-sts.txt: senders must reach the MX over TLS`,
    },
    {
      kind: 'mta-sts-host',
      required: false,
      type: 'CNAME',
      name: `mta-sts.${domain}`,
      value: hostname,
      purpose: `the MTA-STS policy host (RFC 8461 section 3.3); its HTTPS certificate must name mta-sts.${domain}`,
    },
    {
      kind: 'tls-rpt',
      required: false,
      type: 'TXT',
      name: `_smtp._tls.${domain}`,
      value: `v=TLSRPTv1; rua=mailto:${values.reportAddress}`,
      purpose: 'where senders report TLS failures delivering to the domain (RFC 8460 section 3)',
    },
  ];
};

/** The public shape of a record (what the holder publishes). */
export const publicRecord = ({ type, name, value, purpose }: ExpectedRecord): DnsRecord => ({ type, name, value, purpose });

/**
 * The MTA-STS policy file (RFC 8461 section 3.2): mode, this service's MX host, one week.
 * Lines end with CRLF, as the section's ABNF allows and most senders expect.
 */
export const mtaStsPolicy = (hostname: string, mode: 'testing' | 'enforce'): string =>
  ['version: STSv1', `mode: ${mode}`, `mx: ${hostname}`, 'max_age: 604800', ''].join('\r\n');
