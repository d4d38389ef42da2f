import { connect } from 'node:net';
import t from 'tap';
import { startApp } from './helpers/app.js';
import { simpleMessage } from './helpers/mail.js';
import { smtpDialog } from './helpers/smtp.js';

/**
 * What each listener does with the connections it is given: the pause before the SMTP
 * greeting and the early talkers it refuses, the caps on concurrent connections (SMTP,
 * submission, IMAP) and on recipients per message.
 */

interface Exchange {
  text: string;
  closed: boolean;
}

/**
 * Writes `lines` the moment the TCP connection is up, without waiting for the greeting (what
 * an early talker does), then collects everything the server says until it closes the
 * connection or `until` matches what came so far.
 */
const talkFirst = (port: number, lines: string[], until: RegExp): Promise<Exchange> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    const finish = (closed: boolean) => {
      socket.destroy();
      resolve({ text, closed });
    };
    socket.setEncoding('utf8');
    socket.once('connect', () => socket.write(lines.map((line) => `${line}\r\n`).join('')));
    socket.on('data', (chunk: string) => {
      text += chunk;
      if (until.test(text)) finish(false);
    });
    socket.once('close', () => finish(true));
    socket.once('error', reject);
  });

/** A connection that has read its greeting (the first line) and stays open until `close()`. */
const openConnection = (port: number): Promise<{ greeting: string; closed: Promise<void>; close: () => void }> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.setEncoding('utf8');
    const closed = new Promise<void>((done) => socket.once('close', () => done()));
    let text = '';
    socket.on('data', (chunk: string) => {
      text += chunk;
      if (text.includes('\r\n')) resolve({ greeting: text.split('\r\n')[0], closed, close: () => socket.destroy() });
    });
    socket.once('error', reject);
  });

/** The server notices a closed connection a moment after the client: retry until it has. */
const openOnceFreed = async (port: number, welcome: RegExp) => {
  for (let attempt = 0; ; attempt += 1) {
    const connection = await openConnection(port);
    if (welcome.test(connection.greeting) || attempt === 50) return connection;
    await connection.closed;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

const transaction = (to: string) => ['EHLO early.test', 'MAIL FROM:<a@example.org>', `RCPT TO:<${to}>`, 'DATA'];

t.test('with a greeting pause, a client that talks before the greeting is refused with 421 and nothing is stored', async (t) => {
  const { smtpPort, register, api } = await startApp(t, { smtp: { greetingDelayMs: 1500 } });
  const agent = await register();
  const raw = simpleMessage({ subject: 'too early' }).toString();
  const early = await talkFirst(smtpPort, [...transaction(agent.email), `${raw}.`], /\r\n$/);
  t.match(early.text, /^421 .*talk too soon/, 'the first thing the early talker hears is 421, not the greeting');
  t.notMatch(early.text, /^220 /m, 'no greeting is sent to it');
  const after = await talkFirst(smtpPort, ['EHLO early.test'], /^421 /m);
  t.match(after.text, /^421 /, 'every early talker is refused');
  // A client that waits for the greeting, as RFC 5321 section 3.1 asks, is served.
  const polite = await smtpDialog(smtpPort, ['EHLO polite.test', 'MAIL FROM:<a@example.org>', `RCPT TO:<${agent.email}>`, 'DATA', `${raw}.\r\n`]);
  t.match(polite[0], /^220 /);
  t.match(polite[5], /^250 /);
  const inbox = (await api('GET', '/api/v1/agent/inbox?limit=10', { key: agent.apiKey })).body;
  t.same(
    inbox.emails.map((email: { subject: string }) => email.subject),
    ['too early'],
    'only the polite copy is stored',
  );
  t.equal(inbox.totalMessages, 1);
});

t.test('with the pause at 0 the greeting goes out at once: a client that does not wait for it is served', async (t) => {
  const { smtpPort, submissionPort } = await startApp(t, { smtp: { greetingDelayMs: 0 } });
  for (const [name, port] of [
    ['MX', smtpPort],
    ['submission (0 by default)', submissionPort],
  ] as const) {
    const eager = await talkFirst(port, ['EHLO eager.test'], /^250 [^\r\n]*\r\n/m);
    // Unpatched, smtp-server always pauses 100 ms and this client gets 421: npm install applies patches/.
    t.match(eager.text, /^220 /, `${name}: the greeting comes first (smtp-server must carry patches/smtp-server+3.21.6.patch)`);
    t.match(eager.text, /\r\n250-/, `${name}: and EHLO is answered`);
    t.notOk(eager.closed, `${name}: the connection stays open`);
  }
});

t.test('past smtp.maxClients and submission.maxClients a new connection gets 421 and is closed', async (t) => {
  const { smtpPort, submissionPort } = await startApp(t, { smtp: { maxClients: 2, greetingDelayMs: 0 }, submission: { maxClients: 1 } });
  for (const [name, port, max] of [
    ['MX', smtpPort, 2],
    ['submission', submissionPort, 1],
  ] as const) {
    const held = await Promise.all(Array.from({ length: max }, () => openConnection(port)));
    for (const connection of held) t.match(connection.greeting, /^220 /, `${name}: within the cap`);
    const refused = await talkFirst(port, [], /\r\n$/);
    t.match(refused.text, /^421 .*Too many connected clients/, `${name}: one more is refused`);
    const [first, ...rest] = held;
    first.close();
    await first.closed;
    const again = await openOnceFreed(port, /^220 /);
    t.match(again.greeting, /^220 /, `${name}: a place freed is taken again`);
    for (const connection of [again, ...rest]) connection.close();
  }
});

t.test('past imap.maxClients a new IMAP connection gets BYE as its greeting and is closed', async (t) => {
  const { imapPort } = await startApp(t, { imap: { maxClients: 2 } });
  const held = await Promise.all([openConnection(imapPort), openConnection(imapPort)]);
  for (const connection of held) t.match(connection.greeting, /^\* OK /);
  const refused = await talkFirst(imapPort, [], /\r\n$/);
  t.match(refused.text, /^\* BYE Too many connections/, 'RFC 3501 section 7.1.5: BYE refuses the connection');
  held[0].close();
  await held[0].closed;
  const again = await openOnceFreed(imapPort, /^\* OK /);
  t.match(again.greeting, /^\* OK /);
  for (const connection of [again, held[1]]) connection.close();
});

t.test('the MX accepts smtp.maxRecipients recipients per message and answers 452 4.5.3 past it', async (t) => {
  const { smtpPort, app } = await startApp(t, { limits: { registrationsPerIpPerHour: 1000 }, smtp: { greetingDelayMs: 0 } });
  const max = app.config.smtp.maxRecipients;
  t.equal(max, 100, 'the default is the least RFC 5321 section 4.5.3.1.8 allows');
  const addresses: string[] = [];
  for (let i = 0; i <= max; i++) addresses.push((await app.services.accounts.register({ agentId: `r${i}` }, `10.1.${i >> 8}.${i & 255}`)).email);
  const rcpts = addresses.map((address) => `RCPT TO:<${address}>`);
  const raw = simpleMessage({ subject: 'fan-out' }).toString();
  const replies = await smtpDialog(smtpPort, ['EHLO many.test', 'MAIL FROM:<a@example.org>', ...rcpts, `RCPT TO:<${addresses[0]}>`, 'DATA', `${raw}.\r\n`]);
  const rcptReplies = replies.slice(3, 3 + max + 2);
  t.ok(
    rcptReplies.slice(0, max).every((reply) => reply.startsWith('250 ')),
    `the first ${max} are accepted`,
  );
  t.match(rcptReplies[max], /^452 4\.5\.3 /, 'the next one is refused for now (RFC 5321 section 4.5.3.1.10)');
  t.match(rcptReplies[max + 1], /^250 /, 'repeating an accepted recipient adds no copy and is not refused');
  t.match(replies.at(-1), /^250 /, 'the message is accepted for the first ones');
  const count = async (address: string) => {
    const mailbox = await app.services.mailbox.mailboxForAddress(address);
    return mailbox ? (await app.services.mailbox.folder(mailbox.id, 'INBOX')).messageCount : -1;
  };
  t.equal(await count(addresses[0]), 1);
  t.equal(await count(addresses[max - 1]), 1);
  t.equal(await count(addresses[max]), 0, 'the refused recipient got no copy');
});

t.test("submission accepts the contract's 50 recipients per message and answers 452 4.5.3 past it", async (t) => {
  const { submissionPort, register } = await startApp(t);
  const agent = await register();
  const login = Buffer.from(`\0${agent.email}\0${agent.apiKey}`).toString('base64');
  const rcpts = Array.from({ length: 51 }, (_, i) => `RCPT TO:<user${i}@example.com>`);
  const replies = await smtpDialog(submissionPort, [
    'EHLO client.test',
    `AUTH PLAIN ${login}`,
    `MAIL FROM:<${agent.email}>`,
    ...rcpts,
    'RCPT TO:<user0@example.com>',
  ]);
  t.match(replies[2], /^235 /);
  t.ok(
    replies.slice(4, 54).every((reply) => reply.startsWith('250 ')),
    'the first 50 are accepted',
  );
  t.match(replies[54], /^452 4\.5\.3 /);
  t.match(replies[55], /^250 /, 'a repeated recipient is not refused');
});
