import { execFileSync } from 'node:child_process';
import { openDnsServer, publish, type PublishedRecord } from '../test/helpers/dns-server.js';
import { startAgentpost, type Agentpost } from './ingest-targets.js';
import { fmt, percentile } from './lib.js';
import { runLoad } from './smtp-load.js';

/**
 * bench:ingest's `domains` part: one agentpost whose mailbox also receives for 100 aliases
 * spread over 10 verified custom domains. Each round loads it twice back to back, every
 * message to the mailbox's own address, and each to the next alias in turn (in alternating
 * order), so the cost of resolving aliases at RCPT is measured against the single-domain
 * figure of the same run (the issue's budget: within 10%).
 */

const MX_HOST = 'mx.bench.test';
const DOMAINS = 10;
const ALIASES_PER_DOMAIN = 10;

export interface DomainsRun {
  count: number;
  sessions: number;
  rounds: number;
  executable?: string;
  payloadsFor: (to: readonly string[], from: number, n: number) => Buffer[];
}

const api = async (target: Agentpost, key: string, method: string, path: string, body?: unknown) => {
  const response = await fetch(target.baseUrl + path, {
    method,
    body: body === undefined ? undefined : JSON.stringify(body),
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'user-agent': 'agentpost-bench/1.0' },
  });
  const answer = (await response.json()) as Record<string, unknown>;
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(answer)}`);
  return answer;
};

/** The 10 domains, verified over the loopback DNS server, with hosting granted and 100 aliases to the mailbox. */
const setUpDomains = async (target: Agentpost, dns: Awaited<ReturnType<typeof openDnsServer>>, executable?: string): Promise<string[]> => {
  const command = executable ? [executable] : [process.execPath, '--import', 'tsx', 'bin/main.ts'];
  execFileSync(command[0], [...command.slice(1), 'hosting', 'grant', target.address, '30', '--config', target.configFile], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const { apiKey: key } = (await api(target, target.apiKey, 'POST', '/api/v1/agent/access-keys', {
    name: 'bench domains',
    kind: 'domain',
    permissions: ['domains:read', 'domains:write'],
  })) as { apiKey: string };
  const aliases: string[] = [];
  for (let d = 0; d < DOMAINS; d += 1) {
    const added = (await api(target, key, 'POST', '/api/user/domains', { domain: `team${d}.bench.example` })) as { id: string; records: PublishedRecord[] };
    publish(dns, added.records);
    const verified = await api(target, key, 'POST', `/api/user/domains/${added.id}/verify`);
    if (verified.verified !== true) throw new Error(`team${d}.bench.example not verified: ${JSON.stringify(verified)}`);
    for (let a = 0; a < ALIASES_PER_DOMAIN; a += 1) {
      const alias = (await api(target, key, 'POST', `/api/user/domains/${added.id}/aliases`, { localPart: `alias${a}`, mailbox: target.address })) as {
        address: string;
      };
      aliases.push(alias.address);
    }
  }
  return aliases;
};

export const domainsPart = async (run: DomainsRun): Promise<void> => {
  const dns = await openDnsServer({ [MX_HOST]: { A: ['192.0.2.25'] } });
  const target = await startAgentpost('agentpost, 10 domains', {
    executable: run.executable,
    greetingDelayMs: 0,
    configure: (config) => {
      config.smtp.hostname = MX_HOST;
      config.dns = { servers: dns.servers, timeoutMs: 1000, tries: 1 };
      config.limits.personalPlan = { domains: DOMAINS, aliases: DOMAINS * ALIASES_PER_DOMAIN, mailboxes: 10 };
    },
  });
  try {
    const aliases = await setUpDomains(target, dns, run.executable);
    console.log(
      `domains: ${DOMAINS} verified domains, ${aliases.length} aliases to ${target.address}; ${run.sessions} sessions, ${run.count} messages per figure, reused connections`,
    );
    const ratios: number[] = [];
    for (let round = 0; round < run.rounds; round += 1) {
      const rate = async (to: readonly string[], from: number) => {
        await runLoad({ port: target.port, to, payloads: run.payloadsFor(to, from, Math.min(run.count, 1000)), sessions: run.sessions, reuse: true });
        await target.drained();
        const started = performance.now();
        await runLoad({
          port: target.port,
          to,
          payloads: run.payloadsFor(to, from + 100_000, run.count),
          sessions: run.sessions,
          reuse: true,
        });
        // Aliases resolve at RCPT and again at delivery, which a burst's queue puts after the 250s: the rate into the mailboxes.
        await target.drained();
        return run.count / ((performance.now() - started) / 1000);
      };
      // The order alternates, so neither figure always meets the larger store or the warmer process.
      const first = round % 2 === 0 ? 'single' : 'spread';
      const figures = new Map<string, number>();
      for (const which of first === 'single' ? ['single', 'spread'] : ['spread', 'single']) {
        figures.set(which, await rate(which === 'single' ? [target.address] : aliases, round * 1_000_000 + (which === 'single' ? 0 : 500_000)));
      }
      const single = figures.get('single') as number;
      const spread = figures.get('spread') as number;
      ratios.push(spread / single);
      console.log(
        `round ${round + 1} (${first} first): one address ${fmt(single, 0)} msg/s, 100 aliases over 10 domains ${fmt(spread, 0)} msg/s: ${fmt((100 * spread) / single, 1)}%`,
      );
    }
    console.log(
      `domains: spread / single per round ${ratios.map((ratio) => `${fmt(100 * ratio, 1)}%`).join(' ')}, median ${fmt(100 * percentile(ratios, 50), 1)}% (target >= 90%); ${await target.stored()} stored`,
    );
  } finally {
    await target.stop();
    await dns.close();
  }
};
