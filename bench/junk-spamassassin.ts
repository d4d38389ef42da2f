import { execFile, execFileSync, spawn } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { emptyOutcome, tally, type CorpusMessage, type Outcome } from './junk-corpus.js';
import { freePort, waitForPort } from './postfix.js';
import { cpuMs } from './proc.js';

const run = promisify(execFile);

/** SpamAssassin 4 (Debian's `spamassassin`): its rules and Bayes, network tests off. */
export const spamAssassinVersion = (): string | null =>
  existsSync('/usr/bin/spamassassin') ? (/version (\S+)/.exec(execFileSync('spamassassin', ['-V']).toString())?.[1] ?? 'unknown') : null;

/** The processes of a daemon: it and its children (spamd's and rspamd's workers), from /proc. */
export const familyCpuMs = (pid: number): number => {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (Number(entry) === pid || parent === pid) total += cpuMs(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return total;
};

const writeMessages = (dir: string, messages: readonly CorpusMessage[]): void => {
  mkdirSync(dir, { recursive: true });
  for (const message of messages) writeFileSync(join(dir, `${message.id}.eml`), message.raw);
};

/**
 * The site configuration: Debian's plugin loads (*.pre) and defaults, then Bayes on (trained
 * by sa-learn, never by itself), network tests off (spamd --local does the rest).
 */
const siteConfig = (dir: string): string => {
  const site = join(dir, 'site');
  mkdirSync(site, { recursive: true });
  for (const file of readdirSync('/etc/spamassassin').filter((name) => name.endsWith('.pre') || name === '65_debian.cf')) {
    copyFileSync(join('/etc/spamassassin', file), join(site, file));
  }
  const settings = [
    `bayes_path ${join(dir, 'bayes', 'bayes')}`,
    'use_bayes 1',
    'bayes_auto_learn 0',
    'skip_rbl_checks 1',
    'use_razor2 0',
    'use_pyzor 0',
    'use_dcc 0',
  ];
  writeFileSync(join(site, 'local.cf'), `${settings.join('\n')}\n`);
  return site;
};

/** SYMBOLS over spamd's own protocol (SPAMC/1.5): "Spam: True ; 9.4 / 5.0", then the rules that hit. */
const check = (port: number, raw: Buffer): Promise<{ spam: boolean; bayes: boolean }> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const answer = /^Spam: (True|False)/m.exec(text);
      if (answer) resolve({ spam: answer[1] === 'True', bayes: /\bBAYES_\d+/.test(text) });
      else reject(new Error(`spamd: ${text.slice(0, 200)}`));
    });
    socket.write(`SYMBOLS SPAMC/1.5\r\nContent-length: ${raw.length}\r\n\r\n`);
    socket.end(raw);
  });

/** One fold: a fresh Bayes database learned from the training messages, then spamd scores the test messages, two at a time. */
export const spamAssassinFold = async (
  dir: string,
  training: readonly CorpusMessage[],
  testing: readonly CorpusMessage[],
): Promise<{ outcome: Outcome; withBayes: number }> => {
  const site = siteConfig(dir);
  mkdirSync(join(dir, 'bayes'), { recursive: true });
  writeMessages(
    join(dir, 'ham'),
    training.filter((message) => !message.spam),
  );
  writeMessages(
    join(dir, 'spam'),
    training.filter((message) => message.spam),
  );
  for (const kind of ['ham', 'spam']) {
    await run('sa-learn', ['--siteconfigpath', site, '--dbpath', join(dir, 'bayes', 'bayes'), `--${kind}`, join(dir, kind)], { maxBuffer: 1 << 24 });
  }
  // spamd's children run as nobody: they read the Bayes files (and pass through the folders above them).
  for (const path of [dirname(dir), dir, join(dir, 'bayes'), site]) chmodSync(path, 0o755);
  for (const file of readdirSync(join(dir, 'bayes'))) chmodSync(join(dir, 'bayes', file), 0o666);
  const port = await freePort();
  const spamd = spawn(
    'spamd',
    [
      '--local',
      `--siteconfigpath=${site}`,
      `--listen=127.0.0.1:${port}`,
      '--min-children=2',
      '--max-children=2',
      '--max-conn-per-child=1000000',
      '-u',
      'nobody',
    ],
    { stdio: 'ignore' },
  );
  try {
    await waitForPort(port);
    const outcome = emptyOutcome();
    let withBayes = 0;
    const queue = [...testing];
    const before = familyCpuMs(spamd.pid as number);
    await Promise.all(
      [1, 2].map(async () => {
        for (let message = queue.shift(); message; message = queue.shift()) {
          const checked = await check(port, message.raw);
          tally(outcome, message.spam, checked.spam);
          if (checked.bayes) withBayes += 1;
        }
      }),
    );
    outcome.cpuMs = familyCpuMs(spamd.pid as number) - before;
    return { outcome, withBayes };
  } finally {
    spamd.kill('SIGTERM');
    await new Promise((resolve) => spamd.once('exit', resolve));
  }
};
