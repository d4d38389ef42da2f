import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { accepting, freePort } from './ports.js';

export const DOVECOT = '/usr/sbin/dovecot';

export interface Dovecot {
  port: number;
  user: string;
  password: string;
  version: string;
  /** The master process; the IMAP sessions run in processes below it. */
  pid: number;
}

/** The unprivileged user mail runs as: ourselves, or (as root) Dovecot's own user. */
const mailUser = (): { name: string; uid: number; gid: number } | null => {
  const me = userInfo();
  if (me.uid !== 0) return { name: me.username, uid: me.uid, gid: me.gid };
  const entry = spawnSync('getent', ['passwd', 'dovecot'], { encoding: 'utf8' }).stdout.split(':');
  return entry.length > 3 ? { name: 'dovecot', uid: Number(entry[2]), gid: Number(entry[3]) } : null;
};

/**
 * Dovecot (dovecot-imapd) in a temp folder on a loopback port: a passwd-file with one user,
 * maildir under the temp folder, "/" as the hierarchy delimiter and the special-use folders
 * made and subscribed, as agentpost has them; no TLS.
 * Stopped when the test ends. Returns null, with the reason, when it cannot run here.
 */
/** `t` is a tap test, or anything that runs teardowns when done (bench/imap.ts). */
export const startDovecot = async (t: Pick<Test, 'teardown'>): Promise<Dovecot | { skip: string }> => {
  if (!existsSync(DOVECOT)) return { skip: `${DOVECOT} is not installed (apt-get install -y dovecot-imapd)` };
  const user = mailUser();
  if (!user) return { skip: 'no unprivileged user for Dovecot mail processes' };
  const version = spawnSync(DOVECOT, ['--version'], { encoding: 'utf8' }).stdout.trim();
  // A short path of its own: Dovecot's unix sockets live under base_dir, and a socket path has at most 107 bytes.
  const dir = mkdtempSync(join(tmpdir(), 'apdc-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const sub of ['run', 'state', 'home']) mkdirSync(join(dir, sub), { recursive: true });
  if (userInfo().uid === 0) {
    chownSync(join(dir, 'home'), user.uid, user.gid);
    chmodSync(dir, 0o755);
  }
  const port = await freePort();
  const internal =
    userInfo().uid === 0 ? '' : `default_internal_user = ${user.name}\ndefault_login_user = ${user.name}\ndefault_internal_group = ${userInfo().username}\n`;
  writeFileSync(join(dir, 'passwd'), 'tester:{PLAIN}secret\n');
  writeFileSync(
    join(dir, 'dovecot.conf'),
    `
base_dir = ${dir}/run
state_dir = ${dir}/state
log_path = ${dir}/dovecot.log
instance_name = agentpost-test-${port}
${internal}protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain
first_valid_uid = ${Math.min(user.uid, 1)}
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u ${dir}/passwd
}
userdb {
  driver = static
  args = uid=${user.uid} gid=${user.gid} home=${dir}/home/%u
}
mail_location = maildir:~/Maildir
namespace inbox {
  inbox = yes
  separator = /
  mailbox Sent {
    special_use = \\Sent
    auto = subscribe
  }
  mailbox Drafts {
    special_use = \\Drafts
    auto = subscribe
  }
  mailbox Trash {
    special_use = \\Trash
    auto = subscribe
  }
  mailbox Junk {
    special_use = \\Junk
    auto = subscribe
  }
  mailbox Archive {
    special_use = \\Archive
    auto = subscribe
  }
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = ${port}
  }
  inet_listener imaps {
    port = 0
  }
}
service anvil {
  chroot =
}
service imap-login {
  chroot =
}
`,
  );
  let child: ChildProcess;
  try {
    child = spawn(DOVECOT, ['-F', '-c', join(dir, 'dovecot.conf')], { stdio: 'ignore' });
  } catch (error) {
    return { skip: `dovecot could not be started: ${(error as Error).message}` };
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  t.teardown(async () => {
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 3000))]);
  });
  try {
    await Promise.race([
      accepting(port, Date.now() + 15_000, true),
      exited.then(() => {
        throw new Error('dovecot exited at start');
      }),
    ]);
  } catch (error) {
    return { skip: `dovecot did not come up: ${(error as Error).message}` };
  }
  return { port, user: 'tester', password: 'secret', version, pid: child.pid as number };
};
