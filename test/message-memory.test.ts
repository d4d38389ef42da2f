// 16 concurrent 24 MB messages to the MX, then 16 concurrent 24 MB APPENDs, against a real
// `agentpost serve` process: every message is stored byte for byte (sha256 of what IMAP reads
// back) and the process's peak RSS (VmHWM) stays under 400 MB. Received mail is held under one
// byte budget, the rest waits in the spool (src/core/message-intake.ts). Prints what it
// measured: the peak after each burst, and the RSS 15 s after them.
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { ImapFlow } from 'imapflow';
import nodemailer from 'nodemailer';
import t from 'tap';
import { registerAgent, report, sleep } from './helpers/fault.js';
import { runCommand, startServerProcess } from './helpers/process.js';
import { rssOf } from './helpers/rss.js';
import { inboundDrained } from './helpers/status.js';

t.setTimeout(600_000);

const MESSAGES = 16;
const MESSAGE_BYTES = 24 * 1024 * 1024;
const PEAK_LIMIT_MB = 400;
const agentpost = join(resolve(dirname(fileURLToPath(import.meta.url)), '..'), 'bin', 'agentpost');

/**
 * `agentpost` as it runs in production. tap's process-info hooks put their NODE_OPTIONS into
 * every child this runner spawns, whatever environment it is given (about 90 MB more RSS in
 * the server): env(1) takes them out again just before the server starts.
 */
const withoutRunnerHooks = ['-u', 'NODE_OPTIONS', agentpost];
const serverEnv = (): NodeJS.ProcessEnv => Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AGENTPOST_')));

/**
 * An attachment's worth of base64 lines (76 characters and CRLF) of pseudo-random bytes, the
 * shape of most large mail, shared by every message: each message is its own header and this
 * body, so the test holds one copy, not thirty-two.
 */
const sharedBody = (bytes: number): Buffer => {
  const random = Buffer.alloc(Math.ceil((bytes * 3) / 4));
  let state = 0x2545f491;
  for (let i = 0; i + 4 <= random.length; i += 4) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    random.writeInt32LE(state | 0, i);
  }
  const lines = (random.toString('base64').match(/.{76}/g) ?? []).slice(0, Math.floor(bytes / 78));
  return Buffer.from(`${lines.join('\r\n')}\r\n`, 'latin1');
};

const headerOf = (from: string, to: string, id: string): Buffer =>
  Buffer.from(
    [
      `From: <${from}>`,
      `To: <${to}>`,
      `Subject: large ${id}`,
      `Message-ID: <${id}@memory.test>`,
      'Date: Mon, 02 Mar 2026 10:00:00 +0000',
      'MIME-Version: 1.0',
      'Content-Type: application/octet-stream; name="data.bin"',
      'Content-Transfer-Encoding: base64',
      '',
      '',
    ].join('\r\n'),
    'latin1',
  );

interface Sent {
  id: string;
  digest: string;
  bytes: number;
}

const sentOf = (id: string, header: Buffer, body: Buffer): Sent => ({
  id,
  digest: createHash('sha256').update(header).update(body).digest('hex'),
  bytes: header.length + body.length,
});

/** The message as nodemailer streams it: the header, then the shared body in 64 KB pieces. */
const messageStream = (header: Buffer, body: Buffer): Readable =>
  Readable.from(
    (function* () {
      yield header;
      for (let at = 0; at < body.length; at += 65_536) yield body.subarray(at, at + 65_536);
    })(),
  );

/**
 * The sha256 of each message of INBOX as IMAP reads it back, by Message-ID: of its last
 * `tailBytes(id)` bytes (the MX puts its trace and verdict fields on top: RFC 5321 section
 * 4.4, RFC 8601), or of all of it.
 */
const storedDigests = async (port: number, user: string, pass: string, tailBytes: (id: string) => number | null): Promise<Map<string, string>> => {
  const client = new ImapFlow({ host: '127.0.0.1', port, secure: false, auth: { user, pass }, logger: false });
  await client.connect();
  const found = new Map<string, string>();
  try {
    const lock = await client.getMailboxLock('INBOX');
    try {
      for (const { uid } of await client.fetchAll('1:*', { uid: true })) {
        const message = await client.fetchOne(String(uid), { envelope: true, source: true }, { uid: true });
        const source = message ? message.source : undefined;
        if (!message || !source) continue;
        const tail = tailBytes(message.envelope?.messageId ?? '');
        const hash = createHash('sha256').update(tail === null ? source : source.subarray(source.length - tail));
        found.set(message.envelope?.messageId ?? '', hash.digest('hex'));
      }
    } finally {
      lock.release();
    }
  } finally {
    await client.logout();
  }
  return found;
};

const sendToMx = async (port: number, from: string, to: string, header: Buffer, body: Buffer): Promise<void> => {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true, socketTimeout: 300_000 });
  try {
    await transport.sendMail({ envelope: { from, to: [to] }, raw: messageStream(header, body) });
  } finally {
    transport.close();
  }
};

const appendOverImap = async (port: number, user: string, pass: string, message: Buffer): Promise<void> => {
  const client = new ImapFlow({ host: '127.0.0.1', port, secure: false, auth: { user, pass }, logger: false });
  await client.connect();
  try {
    await client.append('INBOX', message);
  } finally {
    await client.logout();
  }
};

t.test(
  `${MESSAGES} concurrent ${MESSAGE_BYTES >> 20} MB messages to the MX and as many APPENDs: stored whole, RSS under ${PEAK_LIMIT_MB} MB`,
  { skip: rssOf(process.pid) ? false : 'no /proc to read RSS from' },
  async (t) => {
    // bin/agentpost builds dist/app first when a source is newer: done here, in a process of its own, so the server's RSS is its own.
    const built = await runCommand('env', [...withoutRunnerHooks, '--version'], { env: serverEnv() });
    t.equal(built.code, 0, 'dist/app is up to date');
    const dir = t.testdir({});
    const configFile = join(dir, 'agentpost.json');
    writeFileSync(configFile, JSON.stringify({ dataDir: join(dir, 'data'), smtp: { greetingDelayMs: 0 } }));
    const server = await startServerProcess(
      t,
      'env',
      [...withoutRunnerHooks, 'serve', '--config', configFile, '--http-port', '0', '--smtp-port', '0', '--trust-proxy'],
      {
        env: serverEnv(),
      },
    );
    const pid = server.child.pid as number;
    const recipient = await registerAgent(server.baseUrl, 'large-mx', '10.2.0.1');
    const appender = await registerAgent(server.baseUrl, 'large-imap', '10.2.0.2');
    const body = sharedBody(MESSAGE_BYTES - 400);
    const idle = rssOf(pid);

    const mxStarted = performance.now();
    const mx = await Promise.all(
      Array.from({ length: MESSAGES }, async (_, i) => {
        const header = headerOf(`sender${i}@remote.test`, recipient.email, `mx${i}`);
        await sendToMx(server.ports.smtp, `sender${i}@remote.test`, recipient.email, header, body);
        return sentOf(`mx${i}`, header, body);
      }),
    );
    const mxSeconds = (performance.now() - mxStarted) / 1000;
    await inboundDrained(server.baseUrl);
    const afterMx = rssOf(pid);

    const appendStarted = performance.now();
    const appended = await Promise.all(
      Array.from({ length: MESSAGES }, async (_, i) => {
        const header = headerOf(appender.email, appender.email, `imap${i}`);
        await appendOverImap(server.ports.imap, appender.email, appender.apiKey, Buffer.concat([header, body]));
        return sentOf(`imap${i}`, header, body);
      }),
    );
    const appendSeconds = (performance.now() - appendStarted) / 1000;
    const afterAppend = rssOf(pid);
    await sleep(15_000);
    const later = rssOf(pid);

    const mxBytes = new Map(mx.map((sent) => [`<${sent.id}@memory.test>`, sent.bytes]));
    const storedMx = await storedDigests(server.ports.imap, recipient.email, recipient.apiKey, (id) => mxBytes.get(id) ?? 0);
    for (const sent of mx) t.equal(storedMx.get(`<${sent.id}@memory.test>`), sent.digest, `${sent.id}: stored byte for byte below our trace fields`);
    const storedImap = await storedDigests(server.ports.imap, appender.email, appender.apiKey, () => null);
    for (const sent of appended) t.equal(storedImap.get(`<${sent.id}@memory.test>`), sent.digest, `${sent.id}: stored byte for byte`);

    report(
      t,
      `message memory: RSS MB idle ${idle?.rssMb}; ${MESSAGES} x ${MESSAGE_BYTES >> 20} MB to the MX in ${mxSeconds.toFixed(1)} s, peak ${afterMx?.peakMb}; ` +
        `${MESSAGES} APPENDs in ${appendSeconds.toFixed(1)} s, peak ${afterAppend?.peakMb}; RSS ${afterAppend?.rssMb} after, ${later?.rssMb} 15 s later`,
    );
    t.ok((afterMx?.peakMb ?? Number.POSITIVE_INFINITY) < PEAK_LIMIT_MB, `peak RSS after the MX burst ${afterMx?.peakMb} MB < ${PEAK_LIMIT_MB} MB`);
    t.ok((afterAppend?.peakMb ?? Number.POSITIVE_INFINITY) < PEAK_LIMIT_MB, `peak RSS after the APPENDs ${afterAppend?.peakMb} MB < ${PEAK_LIMIT_MB} MB`);
    await server.stop();
  },
);
