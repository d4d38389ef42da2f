import dns2 from 'dns2';
import { Socket, type AddressInfo } from 'node:net';
import type { Test } from 'tap';

const { Packet } = dns2;
type Resource = dns2.Packet.Resource;

/** RFC 1035 section 4.1.1 response codes (dns2's typings leave them out). */
const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3 } as const;

/** The records of one name, as a zone file would hold them. */
export interface NameRecords {
  A?: string[];
  AAAA?: string[];
  MX?: { exchange: string; priority: number }[];
  /**
   * One entry per TXT record: a string (split into 255-octet character-strings, as a zone
   * file must) or the character-strings themselves.
   */
  TXT?: (string | string[])[];
  /** An alias: every other type is answered with the CNAME and the target's records (RFC 1034 section 4.3.2). */
  CNAME?: string;
  PTR?: string[];
}

type RecordType = keyof NameRecords;

export interface TestDnsServer {
  /** For `dns.servers`: `127.0.0.1:<port>` (UDP and TCP on the same port). */
  servers: string[];
  port: number;
  /** Replaces the records of a name (names are case-insensitive, without the trailing dot). */
  set(name: string, records: NameRecords): void;
  /** The name no longer exists: NXDOMAIN. */
  remove(name: string): void;
  /** Queries for this name get no answer at all, so the client times out. */
  silence(name: string): void;
  /** Every question received, in order, e.g. `TXT example.com`. */
  queries: string[];
  /** How many of them came over TCP (after a truncated UDP answer, RFC 7766). */
  tcpQueries: number;
  close(): Promise<void>;
}

/**
 * A real authoritative DNS server on loopback (UDP and TCP, port 0) serving the zone the test
 * writes: A, AAAA, MX, TXT with several strings, CNAME chains, PTR, NXDOMAIN (a name that is
 * not there and has nothing below it), NODATA (a name without the asked type) and silence.
 * Point `dns.servers` at `server.servers`. Closed when the test ends.
 */
export const startDnsServer = async (t: Test, zone: Record<string, NameRecords> = {}): Promise<TestDnsServer> => {
  const server = await openDnsServer(zone);
  t.teardown(() => server.close());
  return server;
};

/** The same server without a test to close it (benchmarks); the caller closes it. */
export const openDnsServer = async (zone: Record<string, NameRecords> = {}): Promise<TestDnsServer> => {
  const names = new Map<string, NameRecords | 'silent'>();
  const queries: string[] = [];
  const key = (name: string) => name.toLowerCase().replace(/\.$/, '');
  for (const [name, records] of Object.entries(zone)) names.set(key(name), records);

  let tcpQueries = 0;
  const handle = (request: dns2.Packet, send: (response: dns2.Packet) => Promise<Buffer>, client: unknown): void => {
    if (client instanceof Socket) tcpQueries += 1;
    const response = Packet.createResponseFromRequest(request);
    response.header.aa = 1;
    const [question] = request.questions;
    const typeName = Object.entries(Packet.TYPE).find(([, code]) => code === question?.type)?.[0] ?? String(question?.type);
    queries.push(`${typeName} ${question?.name}`);
    const outcome: Outcome = question ? answer(names, key(question.name), typeName as RecordType) : { rcode: RCODE.FORMERR, records: [] };
    if (outcome === 'silent') return;
    response.header.rcode = outcome.rcode;
    response.answers.push(...outcome.records);
    void send(response);
  };

  const { udp, tcp, port } = await listenOnOnePort(handle);
  const server: TestDnsServer = {
    servers: [`127.0.0.1:${port}`],
    port,
    set: (name, records) => void names.set(key(name), records),
    remove: (name) => void names.delete(key(name)),
    silence: (name) => void names.set(key(name), 'silent'),
    queries,
    get tcpQueries() {
      return tcpQueries;
    },
    close: async () => {
      await Promise.all([new Promise<void>((resolve) => udp.close(() => resolve())), new Promise<void>((resolve) => tcp.close(() => resolve()))]);
    },
  };
  return server;
};

type Outcome = { rcode: number; records: Resource[] } | 'silent';

/** Authoritative answer for one question, chasing CNAMEs inside the zone (at most 8 links). */
const answer = (names: Map<string, NameRecords | 'silent'>, name: string, type: RecordType): Outcome => {
  const records: Resource[] = [];
  let current = name;
  for (let hop = 0; hop < 8; hop += 1) {
    const entry = names.get(current);
    if (entry === 'silent') return 'silent';
    if (!entry) {
      // RFC 8020: a name with names below it exists (an empty non-terminal): NODATA, not NXDOMAIN.
      const exists = [...names.keys()].some((other) => other.endsWith(`.${current}`));
      return { rcode: exists || hop > 0 ? RCODE.NOERROR : RCODE.NXDOMAIN, records };
    }
    if (entry.CNAME && type !== 'CNAME') {
      records.push(resource(current, 'CNAME', { domain: entry.CNAME }));
      current = entry.CNAME.toLowerCase().replace(/\.$/, '');
      continue;
    }
    records.push(...recordsOf(current, entry, type));
    return { rcode: RCODE.NOERROR, records };
  }
  return { rcode: RCODE.SERVFAIL, records: [] };
};

const recordsOf = (name: string, entry: NameRecords, type: RecordType): Resource[] => {
  switch (type) {
    case 'A':
      return (entry.A ?? []).map((address) => resource(name, 'A', { address }));
    case 'AAAA':
      return (entry.AAAA ?? []).map((address) => resource(name, 'AAAA', { address }));
    case 'MX':
      return (entry.MX ?? []).map((mx) => resource(name, 'MX', mx));
    case 'TXT':
      return (entry.TXT ?? []).map((txt) => resource(name, 'TXT', { data: typeof txt === 'string' ? chunks(txt) : txt }));
    case 'CNAME':
      return entry.CNAME ? [resource(name, 'CNAME', { domain: entry.CNAME })] : [];
    case 'PTR':
      return (entry.PTR ?? []).map((domain) => resource(name, 'PTR', { domain }));
    default:
      return [];
  }
};

const resource = (name: string, type: RecordType, data: object): Resource =>
  ({ name, type: Packet.TYPE[type], class: Packet.CLASS.IN, ttl: 1, ...data }) as Resource;

/** RFC 1035 section 3.3: one character-string holds at most 255 octets. */
const chunks = (text: string): string[] => {
  const out: string[] = [];
  for (let start = 0; start < text.length; start += 255) out.push(text.slice(start, start + 255));
  return out.length > 0 ? out : [''];
};

/** UDP on port 0, then TCP on the same port (c-ares retries a truncated answer over TCP); retried if taken. */
const listenOnOnePort = async (handle: dns2.DnsHandler) => {
  for (let attempt = 0; ; attempt += 1) {
    const udp = dns2.createUDPServer(handle);
    await udp.listen(0, '127.0.0.1');
    const port = (udp.address() as AddressInfo).port;
    const tcp = dns2.createTCPServer(handle);
    try {
      await new Promise<void>((resolve, reject) => {
        tcp.once('error', reject);
        tcp.listen(port, '127.0.0.1', () => resolve());
      });
      return { udp, tcp, port };
    } catch (error) {
      udp.close();
      if (attempt >= 5) throw error;
    }
  }
};

/** A record as the domain endpoints list it to publish. */
export interface PublishedRecord {
  type: 'TXT' | 'MX' | 'CNAME';
  name: string;
  value: string;
}

/** Publishes records as a zone would: records of one name together (the apex holds MX and SPF). */
export const publish = (dns: TestDnsServer, records: readonly PublishedRecord[], zone: Record<string, NameRecords> = {}): void => {
  const names = new Map<string, NameRecords>(Object.entries(zone));
  for (const record of records) {
    const entry = names.get(record.name) ?? {};
    if (record.type === 'TXT') entry.TXT = [...(entry.TXT ?? []), record.value];
    if (record.type === 'MX') {
      const [priority, exchange] = record.value.split(' ');
      entry.MX = [...(entry.MX ?? []), { priority: Number(priority), exchange }];
    }
    if (record.type === 'CNAME') entry.CNAME = record.value;
    names.set(record.name, entry);
  }
  for (const [name, entry] of names) dns.set(name, entry);
};
