/** One line of `agentpost doctor` and of the console's Health page. */
export type CheckStatus = 'ok' | 'warn' | 'fail';

/** A DNS record to publish, exactly as the zone needs it. */
export interface RecordToPublish {
  type: 'MX' | 'A' | 'AAAA' | 'TXT';
  name: string;
  value: string;
}

export interface CheckResult {
  /** `mx`, `host-address`, `reverse-dns`, `spf`, `dkim`, `dmarc`, `mta-sts`, `tls-rpt`, `postmaster`, `certificate`, `acme`, `port`. */
  check: string;
  /** What was checked: a domain, the host name, an address or a listener. */
  subject: string;
  status: CheckStatus;
  /** What was found, in a sentence. */
  detail: string;
  /** The record that makes this check pass, when DNS is the fix. */
  publish?: RecordToPublish;
  /** What to do when the fix is not a record of yours (a PTR at the provider, a setting, a command). */
  fix?: string;
}

export interface DoctorReport {
  /** False when any check failed: the deployment cannot send or receive reliably. */
  ok: boolean;
  checks: CheckResult[];
}

/** Where a probe connects. */
export interface ProbeTarget {
  host: string;
  port: number;
  /**
   * Implicit TLS (RFC 8314): the probe completes a handshake (naming `servername`) and closes
   * it properly, then reads the greeting inside it, as a client does; a bare connection that
   * drops mid-handshake would be logged by the server as a failed TLS client.
   */
  tls?: { servername: string };
}

/** Answers whether something listens at host:port and what it says first (an SMTP or IMAP greeting). */
export interface PortProbe {
  /** `expectGreeting` false: connecting (and the TLS handshake) is enough (HTTP sends nothing first). */
  greeting(target: ProbeTarget, timeoutMs: number, expectGreeting?: boolean): Promise<{ ok: true; line: string } | { ok: false; error: string }>;
}

/** The zone-file form of a record: strings of TXT values split at 255 octets (RFC 1035 section 3.3.14). */
export const zoneLine = (record: RecordToPublish): string => {
  const name = record.name.endsWith('.') ? record.name : `${record.name}.`;
  if (record.type !== 'TXT') return `${name} IN ${record.type} ${record.value}`;
  const strings: string[] = [];
  for (let at = 0; at < record.value.length; at += 255) strings.push(`"${record.value.slice(at, at + 255)}"`);
  return `${name} IN TXT ${strings.join(' ')}`;
};
