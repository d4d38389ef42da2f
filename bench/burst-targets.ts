import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type Dovecot, startDovecot } from '../test/helpers/dovecot.js';
import { treeCpuMsWithReaped } from './imap-client.js';
import { startAgentpost } from './ingest-targets.js';
import { freePort, postfixInstalled, postfixVersion, startPostfix, waitForPort } from './postfix.js';
import { cpuMs } from './proc.js';

/**
 * The two sides of bench:ingest's `burst` part, each a service that takes mail over SMTP and
 * shows it in mailboxes over IMAP: agentpost, and a private Postfix handing each message over
 * LMTP to a private Dovecot that writes Maildir (both from Debian, in temp folders, on loopback
 * ports; the system's own instances and configuration are not touched).
 */

export interface MailboxTarget {
  name: string;
  smtpPort: number;
  imapPort: number;
  /** Each recipient's address and the arguments of its IMAP LOGIN. */
  mailboxes: { address: string; login: string }[];
  /** CPU the service has used so far, all its processes and threads, in ms. */
  cpuMs(): number;
  stop(): Promise<void>;
}

const DOVECOT_LMTP = '/usr/lib/dovecot/lmtp';
/** The domain the Postfix side receives for: virtual mailboxes, all handed to Dovecot. */
const LMTP_DOMAIN = 'lmtp.bench.test';

/** agentpost with `mailboxes` registered mailboxes, its defaults otherwise. */
export const startAgentpostMailboxes = async (mailboxes: number, executable?: string): Promise<MailboxTarget> => {
  const agentpost = await startAgentpost('agentpost', { executable, accounts: mailboxes - 1 });
  const accounts = [{ email: agentpost.address, apiKey: agentpost.apiKey }, ...agentpost.accounts];
  return {
    name: 'agentpost',
    smtpPort: agentpost.port,
    imapPort: agentpost.imapPort,
    mailboxes: accounts.map(({ email, apiKey }) => ({ address: email, login: `"${email}" "${apiKey}"` })),
    cpuMs: () => cpuMs(agentpost.pid),
    stop: () => agentpost.stop(),
  };
};

/**
 * The test helper's Dovecot serves IMAP for one user. LMTP on a loopback port and a user per
 * address are added to its configuration, which its master reloads on SIGHUP; the helper keeps
 * its folder to itself, but its master's command line names the config file in it.
 */
const addLmtp = async (dovecot: Dovecot, addresses: string[]): Promise<number> => {
  const configFile = readFileSync(`/proc/${dovecot.pid}/cmdline`, 'utf8').split('\0').filter(Boolean).at(-1) as string;
  const port = await freePort();
  appendFileSync(configFile, `protocols = imap lmtp\nservice lmtp {\n  inet_listener lmtp {\n    address = 127.0.0.1\n    port = ${port}\n  }\n}\n`);
  appendFileSync(join(dirname(configFile), 'passwd'), addresses.map((address) => `${address}:{PLAIN}${dovecot.password}\n`).join(''));
  process.kill(dovecot.pid, 'SIGHUP');
  await waitForPort(port);
  return port;
};

/** Why Postfix with Dovecot over LMTP cannot run here, or null. */
const postfixDovecotMissing = (): string | null => {
  if (!postfixInstalled()) return 'postfix is not installed (apt-get install postfix)';
  if (!existsSync(DOVECOT_LMTP)) return `${DOVECOT_LMTP} is not installed (apt-get install dovecot-lmtpd)`;
  return null;
};

/**
 * Postfix 3.7 (bench/postfix.ts) receiving for LMTP_DOMAIN as virtual mailboxes, every one
 * handed by its LMTP client to Dovecot (test/helpers/dovecot.ts) with LMTP added, which stores
 * it in Maildir and serves it over IMAP. Both keep their defaults otherwise: Postfix's queue
 * manager, its delivery concurrency (20 per destination) and in_flow_delay, Dovecot's fsync
 * of each message before its LMTP 250.
 */
export const startPostfixDovecot = async (mailboxes: number): Promise<MailboxTarget | { skip: string }> => {
  const missing = postfixDovecotMissing();
  if (missing) return { skip: missing };
  const teardowns: (() => unknown)[] = [];
  const stop = async () => {
    for (const teardown of teardowns.reverse()) await teardown();
  };
  try {
    const dovecot = await startDovecot({ teardown: (fn: () => unknown) => teardowns.push(fn) } as never);
    if ('skip' in dovecot) return await stop(), dovecot;
    const addresses = Array.from({ length: mailboxes }, (_, i) => `box${i + 1}@${LMTP_DOMAIN}`);
    const lmtpPort = await addLmtp(dovecot, addresses);
    const postfix = await startPostfix([`virtual_mailbox_domains=${LMTP_DOMAIN}`, `virtual_transport=lmtp:inet:127.0.0.1:${lmtpPort}`]);
    teardowns.push(() => postfix.stop());
    return {
      name: `Postfix ${postfixVersion()} + Dovecot ${dovecot.version.split(' ')[0]} (LMTP, Maildir)`,
      smtpPort: postfix.port,
      imapPort: dovecot.port,
      mailboxes: addresses.map((address) => ({ address, login: `"${address}" "${dovecot.password}"` })),
      cpuMs: () => treeCpuMsWithReaped(postfix.masterPid()) + treeCpuMsWithReaped(dovecot.pid),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
};
