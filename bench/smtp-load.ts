import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { createSecureContext, connect as tlsConnect, type SecureContext, type TLSSocket } from 'node:tls';

/**
 * The SMTP load of bench:ingest: `sessions` clients, each sending its share of the messages
 * one at a time in lock-step (no PIPELINING, as Postfix's smtp-source does), either over one
 * connection per client (`reuse`) or over a new connection per message (most senders on the
 * Internet). A bare socket client costs far less CPU than nodemailer, so the servers, not
 * the client, are what is measured. Every reply is checked: a refusal stops the run. With
 * `starttls`, each connection upgrades after EHLO (RFC 3207), as a sending MTA does.
 */

/** One SMTP conversation: send a line, wait for the complete reply (RFC 5321 section 4.2.1). */
class Conversation {
  private buffer = '';
  private waiting: { resolve: (reply: string) => void; reject: (error: Error) => void } | null = null;
  private failure: Error | null = null;

  constructor(readonly socket: Socket) {
    socket.setNoDelay(true);
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      this.buffer += chunk;
      this.deliver();
    });
    const fail = (error: Error) => {
      this.failure ??= error;
      this.waiting?.reject(this.failure);
      this.waiting = null;
    };
    socket.on('error', fail);
    socket.on('close', () => fail(new Error('connection closed')));
  }

  private deliver(): void {
    const match = /^(?:\d{3}-[^\r\n]*\r\n)*\d{3}(?: [^\r\n]*)?\r\n/.exec(this.buffer);
    if (!match || !this.waiting) return;
    this.buffer = this.buffer.slice(match[0].length);
    const { resolve } = this.waiting;
    this.waiting = null;
    resolve(match[0]);
  }

  reply(expect: string): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      if (this.failure) return reject(this.failure);
      this.waiting = { resolve, reject };
      this.deliver();
    }).then((reply) => {
      if (!reply.startsWith(expect)) throw new Error(`expected ${expect}, got ${reply.trim()}`);
      return reply;
    });
  }

  async command(line: string | Buffer, expect: string): Promise<string> {
    this.socket.write(line);
    return this.reply(expect);
  }
}

const open = (port: number): Promise<Conversation> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => resolve(new Conversation(socket)));
    socket.once('error', reject);
  });

/** Where one client keeps the TLS session its server last gave it (RFC 8446 section 4.6.1 tickets). */
interface Resumption {
  session?: Buffer;
  /** Handshakes that resumed. */
  reused?: number;
}

/**
 * STARTTLS and EHLO again (RFC 3207 section 4.2: the session starts over). The certificate is
 * not checked (opportunistic, as MTAs deliver to MX hosts). With `resumption`, the client
 * offers the server's last ticket, as a sender that keeps a TLS session cache does; without
 * it every connection is a full handshake, the most a server pays. Every connection shares
 * one client context, as a sending MTA keeps one (Postfix's smtp_tls has one SSL_CTX per
 * process): without it node:tls builds a context per connection, about 0.2 ms of the client's
 * CPU that no real sender spends and that the server, on the same cores, would go without.
 */
const startTls = async (conversation: Conversation, context: SecureContext, resumption?: Resumption): Promise<Conversation> => {
  await conversation.command('STARTTLS\r\n', '220');
  const secure = await new Promise<TLSSocket>((resolve, reject) => {
    const socket = tlsConnect(
      { socket: conversation.socket, secureContext: context, rejectUnauthorized: false, servername: 'mx.bench.test', session: resumption?.session },
      () => resolve(socket),
    );
    if (resumption) socket.on('session', (session: Buffer) => (resumption.session = session));
    socket.once('error', reject);
  });
  if (resumption && secure.isSessionReused()) resumption.reused = (resumption.reused ?? 0) + 1;
  const upgraded = new Conversation(secure);
  await upgraded.command('EHLO load.bench.test\r\n', '250');
  return upgraded;
};

/** A message's DATA payload: dot-stuffed (RFC 5321 section 4.5.2) and terminated. */
export const dataPayload = (raw: Buffer): Buffer =>
  Buffer.concat([Buffer.from(raw.toString('latin1').replace(/\r\n\./g, '\r\n..'), 'latin1'), Buffer.from('.\r\n')]);

const transaction = async (conversation: Conversation, to: string, payload: Buffer): Promise<void> => {
  await conversation.command('MAIL FROM:<sender@example.org>\r\n', '250');
  await conversation.command(`RCPT TO:<${to}>\r\n`, '250');
  await conversation.command('DATA\r\n', '354');
  await conversation.command(payload, '250');
};

export interface LoadResult {
  seconds: number;
  /** Connect to the end of the greeting, ms, one sample per connection. */
  greetingMs: number[];
  /** TLS handshakes that resumed a session (with `starttls: 'resumed'`). */
  resumed: number;
  /** CPU this (client) process used, ms: the load is only meaningful while it is well below the wall time. */
  clientCpuMs: number;
  /** When the load started, the first 250 to a DATA came and the last one did (performance.now()). */
  startedAt: number;
  firstAcceptedAt: number;
  lastAcceptedAt: number;
}

export interface Load {
  port: number;
  /** The recipient, or one per payload (payload i goes to `to[i % to.length]`). */
  to: string | readonly string[];
  payloads: Buffer[];
  sessions: number;
  reuse: boolean;
  /** Upgrade each connection with STARTTLS before the first message: `full` handshakes, or `resumed` from the last ticket. */
  starttls?: 'full' | 'resumed';
}

export const runLoad = async ({ port, to, payloads, sessions, reuse, starttls }: Load): Promise<LoadResult> => {
  const greetingMs: number[] = [];
  const context = createSecureContext();
  const greet = async (resumption: Resumption): Promise<Conversation> => {
    const started = performance.now();
    const conversation = await open(port);
    await conversation.reply('220');
    greetingMs.push(performance.now() - started);
    await conversation.command('EHLO load.bench.test\r\n', '250');
    if (!starttls) return conversation;
    return startTls(conversation, context, starttls === 'resumed' ? resumption : undefined);
  };
  const leave = async (conversation: Conversation) => {
    await conversation.command('QUIT\r\n', '221');
    conversation.socket.destroy();
  };
  let next = 0;
  let [firstAcceptedAt, lastAcceptedAt] = [Infinity, 0];
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const resumptions: Resumption[] = [];
  await Promise.all(
    Array.from({ length: sessions }, async () => {
      let conversation: Conversation | null = null;
      const resumption: Resumption = {};
      resumptions.push(resumption);
      while (next < payloads.length) {
        const index = next++;
        conversation ??= await greet(resumption);
        await transaction(conversation, typeof to === 'string' ? to : to[index % to.length], payloads[index]);
        const acceptedAt = performance.now();
        firstAcceptedAt = Math.min(firstAcceptedAt, acceptedAt);
        lastAcceptedAt = Math.max(lastAcceptedAt, acceptedAt);
        if (!reuse) {
          await leave(conversation);
          conversation = null;
        }
      }
      if (conversation) await leave(conversation);
    }),
  );
  const cpu = process.cpuUsage(cpuBefore);
  const resumed = resumptions.reduce((sum, resumption) => sum + (resumption.reused ?? 0), 0);
  return {
    seconds: (performance.now() - started) / 1000,
    greetingMs,
    resumed,
    clientCpuMs: (cpu.user + cpu.system) / 1000,
    startedAt: started,
    firstAcceptedAt,
    lastAcceptedAt,
  };
};

/**
 * `count` SMTP connections that greet (EHLO) and then idle, as a client between messages
 * does. Opened 50 at a time so the listen backlog never overflows. `close()` ends them all.
 */
export const holdIdleSmtp = async (port: number, count: number): Promise<{ close(): void }> => {
  const sockets: Socket[] = [];
  for (let i = 0; i < count; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, count - i) }, async () => {
        const conversation = await open(port);
        sockets.push(conversation.socket);
        await conversation.reply('220');
        await conversation.command('EHLO idle.bench.test\r\n', '250');
      }),
    );
  }
  return { close: () => sockets.forEach((socket) => socket.destroy()) };
};

/** Whether a client that sends EHLO the moment it is connected hears 421 (an early talker refused). */
export const refusesEarlyTalker = async (port: number): Promise<boolean> => {
  const conversation = await open(port);
  conversation.socket.write('EHLO early.bench.test\r\n');
  const first = await conversation.reply('');
  conversation.socket.destroy();
  return first.startsWith('421');
};
