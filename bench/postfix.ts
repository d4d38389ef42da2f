import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, Socket, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { treeCpuMsWithReaped } from './imap-client.js';

/** Shared by the benchmarks that compare with Postfix (bench:send, bench:ingest). */

export const postfixInstalled = (): boolean =>
  existsSync('/etc/postfix/master.cf') &&
  (() => {
    try {
      execFileSync('postconf', ['-d', 'mail_version'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })();

export const postfixVersion = (): string => execFileSync('postconf', ['-d', '-h', 'mail_version']).toString().trim();

export interface Postfix {
  port: number;
  /** The master process, parent of every Postfix process of this instance. */
  masterPid(): number;
  /** The instance's CPU so far, ms: its master and every process it started, ended ones too. */
  cpuMs(): number;
  stop(): void;
}

/**
 * A private Postfix instance (own config, queue and log under a temp folder, loopback only)
 * with `settings` (postconf `name=value`) on top of the system's main.cf. Needs root, as
 * Postfix does; the system instance is untouched.
 */
export const startPostfix = async (settings: string[]): Promise<Postfix> => {
  const root = mkdtempSync(join(tmpdir(), 'agentpost-bench-postfix-'));
  chmodSync(root, 0o755);
  const configDir = join(root, 'etc');
  for (const dir of ['etc', 'spool', 'lib']) mkdirSync(join(root, dir));
  chownSync(join(root, 'lib'), Number(execFileSync('id', ['-u', 'postfix']).toString().trim()), 0);
  // A package installed with "No configuration" has no main.cf: Postfix's built-in defaults then.
  if (existsSync('/etc/postfix/main.cf')) copyFileSync('/etc/postfix/main.cf', join(configDir, 'main.cf'));
  else writeFileSync(join(configDir, 'main.cf'), 'compatibility_level = 3.6\n');
  copyFileSync('/etc/postfix/master.cf', join(configDir, 'master.cf'));
  const port = await freePort();
  const postconf = (...args: string[]) => execFileSync('postconf', ['-c', configDir, ...args], { stdio: 'pipe' });
  postconf(
    '-e',
    `queue_directory=${join(root, 'spool')}`,
    `data_directory=${join(root, 'lib')}`,
    'inet_interfaces=127.0.0.1',
    'inet_protocols=ipv4',
    'mydestination=',
    'mynetworks=127.0.0.0/8',
    'smtpd_tls_security_level=none',
    'smtp_tls_security_level=none',
    `maillog_file_prefixes=${root}`,
    `maillog_file=${join(root, 'maillog')}`,
    'myhostname=bench.localhost',
    'alias_maps=',
    'alias_database=',
    'local_recipient_maps=',
    'smtpd_relay_restrictions=permit_mynetworks, reject',
    ...settings,
  );
  postconf('-F', '-e', '*/*/chroot = n');
  postconf('-M', '-X', 'smtp/inet');
  postconf('-M', '-e', `127.0.0.1:${port}/inet=127.0.0.1:${port} inet n - n - - smtpd`);
  execFileSync('postfix', ['-c', configDir, 'set-permissions'], { stdio: 'pipe' });
  execFileSync('postfix', ['-c', configDir, 'start'], { stdio: 'pipe' });
  await waitForPort(port);
  // Right-aligned in a fixed width, as Postfix writes it.
  const masterPid = Number(readFileSync(join(root, 'spool', 'pid', 'master.pid'), 'utf8').trim());
  return {
    port,
    masterPid: () => masterPid,
    cpuMs: () => treeCpuMsWithReaped(masterPid),
    stop: () => {
      execFileSync('postfix', ['-c', configDir, 'stop'], { stdio: 'ignore' });
      rmSync(root, { recursive: true, force: true });
    },
  };
};

/** Ports handed out in this run: the kernel may offer a port again once its probe is closed. */
const handedOut = new Set<number>();

/** A port nothing listens on, never one already handed out (the server would die of EADDRINUSE and the run hang). */
export const freePort = async (): Promise<number> => {
  for (;;) {
    const port = await new Promise<number>((resolve) => {
      const server = createServer();
      server.listen(0, '127.0.0.1', () => {
        const { port: probed } = server.address() as AddressInfo;
        server.close(() => resolve(probed));
      });
    });
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    return port;
  }
};

/** Waits up to a minute: a server starting on a busy machine can take a while. */
export const waitForPort = async (port: number): Promise<void> => {
  for (let i = 0; i < 600; i += 1) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = new Socket();
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
      socket.connect(port, '127.0.0.1');
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`nothing listens on ${port}`);
};
