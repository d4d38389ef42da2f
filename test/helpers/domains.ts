import type { Test } from 'tap';
import type { ConfigLayer } from '../../src/config/types.js';
import { startApp, type TestApp } from './app.js';
import { publish, startDnsServer, type TestDnsServer } from './dns-server.js';
import { issueAccessKey } from './keys.js';

export { publish };

/** The MX host name the test apps greet with and the records name. */
export const MX_HOST = 'mx.agentpost.test';

export interface DnsRecordView {
  type: 'TXT' | 'MX' | 'CNAME';
  name: string;
  value: string;
  purpose: string;
}

/** An app whose every lookup goes to a real DNS server on loopback, answering fast when silent. */
export const startDomainApp = async (
  t: Test,
  overrides: ConfigLayer = {},
  options: Parameters<typeof startApp>[2] = {},
): Promise<{ app: TestApp; dns: TestDnsServer }> => {
  const dns = await startDnsServer(t, { [MX_HOST]: { A: ['192.0.2.25'] } });
  const app = await startApp(
    t,
    {
      smtp: { hostname: MX_HOST },
      dns: { servers: dns.servers, timeoutMs: 300, tries: 1 },
      ...overrides,
    },
    options,
  );
  return { app, dns };
};

/** A key with both domain permissions, issued by the agent's full key. */
export const domainKey = async (app: TestApp, fullKey: string, permissions: string[] = ['domains:read', 'domains:write']): Promise<string> =>
  (await issueAccessKey(app, fullKey, { name: `domains ${permissions.join(' ')}`, kind: 'domain', permissions })).apiKey;

export interface VerifiedDomain {
  id: string;
  domain: string;
  records: DnsRecordView[];
}

/** Adds a domain, publishes its records and verifies it; fails the setup otherwise. */
export const addVerifiedDomain = async (app: TestApp, dns: TestDnsServer, key: string, domain: string): Promise<VerifiedDomain> => {
  const added = await app.api('POST', '/api/user/domains', { key, body: { domain } });
  if (added.status !== 200) throw new Error(`add failed: ${added.status} ${JSON.stringify(added.body)}`);
  publish(dns, added.body.records);
  const verified = await app.api('POST', `/api/user/domains/${added.body.id}/verify`, { key });
  if (!verified.body.verified) throw new Error(`not verified: ${JSON.stringify(verified.body)}`);
  return { id: added.body.id, domain, records: added.body.records };
};

/** An agent with hosting granted, a domain key and a verified domain. */
export const hostedHolder = async (app: TestApp, dns: TestDnsServer, domain: string, days = 30) => {
  const holder = await app.register();
  await app.app.services.hosting.grant(holder.email, days);
  const key = await domainKey(app, holder.apiKey);
  const verified = await addVerifiedDomain(app, dns, key, domain);
  return { holder, key, domain: verified };
};
