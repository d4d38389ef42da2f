import t from 'tap';
import { ManualClock } from '../src/core/clock.js';
import { startApp, type TestApp } from './helpers/app.js';
import { imapLogin, rawImap } from './helpers/imap.js';
import { issueAccessKey } from './helpers/keys.js';
import { smtpSend, smtpSendRaw } from './helpers/smtp.js';
import { plaintextLoginAllowed } from '../src/imap/session.js';

const CRLF = '\r\n';

const fixture = (subject: string, body: string, extraHeaders = ''): Buffer =>
  Buffer.from(
    `From: Sender Person <sender@example.org>${CRLF}To: whoever@example.net${CRLF}Subject: ${subject}${CRLF}` +
      `Message-ID: <${subject.replace(/\W/g, '')}@example.org>${CRLF}Date: Mon, 2 Mar 2026 10:00:00 +0000${CRLF}${extraHeaders}` +
      `MIME-Version: 1.0${CRLF}Content-Type: text/plain; charset=utf-8${CRLF}${CRLF}${body}${CRLF}`,
  );

const deliver = (app: TestApp, to: string, raw: Buffer) => smtpSendRaw(app.smtpPort, 'sender@example.org', [to], raw);

t.test('LOGIN takes the mailbox address and the full key; anything else is refused', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  const other = await app.register();
  const client = await imapLogin(t, app.imapPort, agent.email, agent.apiKey);
  t.ok(client.authenticated, 'full key logs in');
  t.ok(client.capabilities.has('IDLE'));
  t.ok(client.capabilities.has('LITERAL+'));

  const raw = await rawImap(t, app.imapPort);
  raw.send(`a1 LOGIN ${agent.email} svc_${'0'.repeat(64)}${CRLF}`);
  t.match(await raw.read(/^a1 /m), /^a1 NO \[AUTHENTICATIONFAILED\]/m, 'wrong key');
  raw.send(`a2 LOGIN ${agent.email} svc_access_${'a'.repeat(64)}${CRLF}`);
  t.match(await raw.read(/^a2 /m), /^a2 NO \[AUTHORIZATIONFAILED\] limited access keys cannot use IMAP/m, 'access-key-shaped key');
  raw.send(`a3 LOGIN ${other.email} ${agent.apiKey}${CRLF}`);
  t.match(await raw.read(/^a3 /m), /^a3 NO \[AUTHENTICATIONFAILED\]/m, 'a key of another mailbox');
  raw.send(`a4 SELECT INBOX${CRLF}`);
  t.match(await raw.read(/^a4 /m), /^a4 BAD /m, 'SELECT before LOGIN');
  raw.send(`a5 LOGIN "${agent.email.toUpperCase()}" "${agent.apiKey}"${CRLF}`);
  t.match(await raw.read(/^a5 /m), /^a5 OK \[CAPABILITY [^\]]*IMAP4rev1/m, 'the address is case-insensitive');
});

t.test('a real limited key is refused; a rotated-out key ends its open session', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  const reader = await issueAccessKey(app, agent.apiKey, { name: 'reader', kind: 'mail', permissions: ['mail:read'] });
  const raw = await rawImap(t, app.imapPort);
  raw.send(`k1 LOGIN ${agent.email} ${reader.apiKey}${CRLF}`);
  t.match(await raw.read(/^k1 /m), /^k1 NO \[AUTHORIZATIONFAILED\] limited access keys cannot use IMAP/m);
  raw.send(`k2 LOGIN ${agent.email} ${agent.apiKey}${CRLF}k3 SELECT INBOX${CRLF}`);
  t.match(await raw.read(/^k3 /m), /^k3 OK/m);
  const prepared = await app.api('POST', '/api/v1/agent/keys', { key: agent.apiKey, body: { action: 'prepare' } });
  raw.send(`k4 NOOP${CRLF}`);
  t.match(await raw.read(/^k4 /m), /^k4 OK/m, 'the original key still works while a replacement is pending');
  const activated = await app.api('POST', '/api/v1/agent/keys', { key: prepared.body.apiKey, body: { action: 'activate' } });
  t.equal(activated.status, 200);
  raw.send(`k5 NOOP${CRLF}`);
  t.match(await raw.read(/^\* BYE /m), /^\* BYE the key was revoked or expired/m, 'the revoked key is cut off at its next command');
  await raw.closed();
  const client = await imapLogin(t, app.imapPort, agent.email, prepared.body.apiKey);
  t.ok(client.authenticated, 'the new key logs in');
});

t.test('AUTHENTICATE PLAIN, with an initial response and after a continuation', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  const token = Buffer.from(`\0${agent.email}\0${agent.apiKey}`).toString('base64');
  const first = await rawImap(t, app.imapPort);
  first.send(`p1 AUTHENTICATE PLAIN ${token}${CRLF}`);
  t.match(await first.read(/^p1 /m), /^p1 OK /m);
  const second = await rawImap(t, app.imapPort);
  second.send(`p2 AUTHENTICATE PLAIN${CRLF}`);
  t.match(await second.read(/^\+ ?\r\n/m), /^\+/);
  second.send(`${Buffer.from(`\0${agent.email}\0svc_${'1'.repeat(64)}`).toString('base64')}${CRLF}`);
  t.match(await second.read(/^p2 /m), /^p2 NO \[AUTHENTICATIONFAILED\]/m);
});

t.test('plaintext login is refused off loopback without TLS unless allowed', async (t) => {
  t.equal(plaintextLoginAllowed('127.0.0.1', false, false), true);
  t.equal(plaintextLoginAllowed('::1', false, false), true);
  t.equal(plaintextLoginAllowed('::ffff:127.0.0.1', false, false), true);
  t.equal(plaintextLoginAllowed('203.0.113.5', false, false), false);
  t.equal(plaintextLoginAllowed('203.0.113.5', false, true), true);
  t.equal(plaintextLoginAllowed('203.0.113.5', true, false), true);
});

t.test('folders, SELECT and STATUS agree with REST', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  await deliver(app, agent.email, fixture('First', 'one'));
  const client = await imapLogin(t, app.imapPort, agent.email, agent.apiKey);
  const folders = await client.list();
  t.same(
    folders.map((folder) => folder.path).sort(),
    ['Archive', 'Drafts', 'INBOX', 'Junk', 'Sent', 'Trash'],
    'the special-use folders are made when a client lists',
  );
  t.same(Object.fromEntries(folders.map((folder) => [folder.path, folder.specialUse ?? null])), {
    INBOX: '\\Inbox',
    Sent: '\\Sent',
    Drafts: '\\Drafts',
    Trash: '\\Trash',
    Junk: '\\Junk',
    Archive: '\\Archive',
  });
  const inbox = await app.api('GET', '/api/v1/agent/inbox', { key: agent.apiKey });
  const mailbox = await client.mailboxOpen('INBOX');
  t.equal(String(mailbox.uidValidity), inbox.body.uidValidity, 'uidValidity is the one REST shows');
  t.equal(mailbox.exists, 1);
  t.equal(mailbox.uidNext, 2);
  t.same([...(mailbox.permanentFlags ?? [])], ['\\Answered', '\\Flagged', '\\Deleted', '\\Seen', '\\Draft', '\\*']);
  const status = await client.status('Sent', { messages: true, uidNext: true, unseen: true, uidValidity: true });
  t.match(status, { messages: 0, uidNext: 1, unseen: 0 });
  await t.rejects(client.mailboxOpen('Nope'));
});

t.test('FETCH serves the stored bytes exactly, with envelope, flags and sections', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  const sent = fixture('=?utf-8?q?Gr=C3=BC=C3=9Fe?=', 'Hello\r\nsecond line', 'Cc: "Doe, Jane" <jane@example.com>\r\n');
  await deliver(app, agent.email, sent);
  const client = await imapLogin(t, app.imapPort, agent.email, agent.apiKey);
  await client.mailboxOpen('INBOX');
  const message = await client.fetchOne('1', { source: true, envelope: true, flags: true, size: true, internalDate: true, uid: true });
  t.ok(message);
  if (!message) return;
  const source = message.source as Buffer;
  t.ok(source.toString('latin1').startsWith('Received: from '), 'our trace header comes first');
  t.ok(source.subarray(source.length - sent.length).equals(sent), 'then the bytes exactly as sent');
  t.equal(message.size, source.length);
  t.equal(message.uid, 1);
  t.same([...(message.flags ?? [])], ['\\Recent'], 'BODY.PEEK does not set \\Seen; the first session to select it sees it \\Recent');
  t.equal(message.envelope?.subject, 'Grüße');
  t.same(message.envelope?.from, [{ name: 'Sender Person', address: 'sender@example.org' }]);
  t.same(message.envelope?.cc, [{ name: 'Doe, Jane', address: 'jane@example.com' }]);
  t.equal(message.envelope?.messageId, '<utf8qGrC3BCC39Fe@example.org>');

  const raw = await rawImap(t, app.imapPort);
  raw.send(`s1 LOGIN ${agent.email} ${agent.apiKey}${CRLF}s2 EXAMINE INBOX${CRLF}`);
  await raw.read(/^s2 OK \[READ-ONLY\]/m);
  raw.send(`s3 UID FETCH 1 (BODY.PEEK[HEADER.FIELDS (Subject cc)] BODY[1] BODY[TEXT]<0.5>)${CRLF}`);
  const response = await raw.read(/^s3 /m);
  t.match(
    response,
    `BODY[HEADER.FIELDS (Subject cc)] {${'Subject: =?utf-8?q?Gr=C3=BC=C3=9Fe?=\r\nCc: "Doe, Jane" <jane@example.com>\r\n\r\n'.length}}\r\nSubject: =?utf-8?q?Gr=C3=BC=C3=9Fe?=\r\nCc: "Doe, Jane" <jane@example.com>\r\n\r\n`,
  );
  t.match(response, 'BODY[1] {20}\r\nHello\r\nsecond line\r\n');
  t.match(response, 'BODY[TEXT]<0> {5}\r\nHello');
  t.notMatch(response, /FLAGS/, 'a body fetch on an EXAMINEd folder changes no flag');
});

t.test('BODYSTRUCTURE and parts of a multipart message', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  await smtpSend(app.smtpPort, {
    from: 'sender@example.org',
    to: agent.email,
    subject: 'Parts',
    text: 'plain body',
    html: '<p>html body</p>',
    attachments: [{ filename: 'data.bin', content: Buffer.from([0, 1, 2, 3, 255]) }],
  });
  const client = await imapLogin(t, app.imapPort, agent.email, agent.apiKey);
  await client.mailboxOpen('INBOX');
  const message = await client.fetchOne('1', { bodyStructure: true, bodyParts: ['1.1', '1.2', '2'] });
  t.ok(message);
  if (!message) return;
  t.equal(message.bodyStructure?.type, 'multipart/mixed');
  const [alternative, attachment] = message.bodyStructure?.childNodes ?? [];
  t.equal(alternative.type, 'multipart/alternative');
  t.same(
    alternative.childNodes?.map((node) => node.type),
    ['text/plain', 'text/html'],
  );
  t.equal(attachment.disposition, 'attachment');
  t.same(attachment.dispositionParameters, { filename: 'data.bin' });
  t.equal(message.bodyParts?.get('1.1')?.toString(), 'plain body');
  t.equal(message.bodyParts?.get('1.2')?.toString(), '<p>html body</p>');
  t.same(Buffer.from(message.bodyParts?.get('2')?.toString() ?? '', 'base64'), Buffer.from([0, 1, 2, 3, 255]));
});

t.test('a message over the 10 MB REST read limit is readable over IMAP', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  const line = 'x'.repeat(98) + CRLF;
  const body = line.repeat(Math.ceil((11 * 1024 * 1024) / line.length));
  const sent = fixture('Big one', body);
  await deliver(app, agent.email, sent);
  const refused = await app.api('GET', '/api/v1/agent/email/1', { key: agent.apiKey });
  t.equal(refused.status, 413);
  t.match(refused.body.error, /IMAP/);
  const client = await imapLogin(t, app.imapPort, agent.email, agent.apiKey);
  await client.mailboxOpen('INBOX');
  const message = await client.fetchOne('1', { source: true, size: true });
  t.ok(message);
  if (!message) return;
  const source = message.source as Buffer;
  t.ok(source.length > 11 * 1024 * 1024);
  t.equal(message.size, source.length);
  t.ok(source.subarray(source.length - sent.length).equals(sent), 'byte-exact after our Received header');
});

t.test('flags are the ones REST shows: \\Seen is isRead, \\Flagged is isStarred', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  await deliver(app, agent.email, fixture('One', 'first'));
  await deliver(app, agent.email, fixture('Two', 'second'));
  await deliver(app, agent.email, fixture('Three', 'third'));
  const client = await imapLogin(t, app.imapPort, agent.email, agent.apiKey);
  await client.mailboxOpen('INBOX');
  const restFlags = async () => {
    const list = await app.api('GET', '/api/v1/agent/inbox', { key: agent.apiKey });
    return Object.fromEntries(list.body.emails.map((email: any) => [email.id, [email.isRead, email.isStarred]]));
  };
  await client.messageFlagsAdd('1', ['\\Seen', '\\Flagged', '\\Answered'], { uid: true });
  t.same(await restFlags(), { 1: [true, true], 2: [false, false], 3: [false, false] });
  await client.messageFlagsRemove('1', ['\\Seen'], { uid: true });
  t.same((await restFlags())['1'], [false, true]);
  await client.messageFlagsSet('1', ['\\Seen'], { uid: true });
  t.same((await restFlags())['1'], [true, false]);

  const read = await app.api('GET', '/api/v1/agent/email/2', { key: agent.apiKey });
  t.equal(read.status, 200);
  const afterRest = await client.fetchOne('2', { flags: true }, { uid: true });
  t.same([...(afterRest ? (afterRest.flags ?? []) : [])], ['\\Seen', '\\Recent'], 'a REST read shows as \\Seen');

  await client.fetchOne('3', { source: true }, { uid: true });
  t.same((await restFlags())['3'], [false, false], 'BODY.PEEK[] leaves it unread');
  const raw = await rawImap(t, app.imapPort);
  raw.send(`f1 LOGIN ${agent.email} ${agent.apiKey}${CRLF}f2 SELECT INBOX${CRLF}f3 UID FETCH 3 BODY[]<0.4>${CRLF}`);
  const fetched = await raw.read(/^f3 /m);
  t.match(fetched, /\* 3 FETCH \(UID 3 FLAGS \(\\Seen\) BODY\[\]<0> \{4\}\r\nRece\)/);
  t.same((await restFlags())['3'], [true, false], 'a non-PEEK body fetch sets \\Seen');
  raw.send(`f4 STORE 1:2 -FLAGS.SILENT (\\Seen)${CRLF}`);
  t.notMatch(await raw.read(/^f4 OK/m), /FETCH/, '.SILENT sends no FETCH');
  t.same(await restFlags(), { 1: [false, false], 2: [false, false], 3: [true, false] });
  raw.send(`f5 EXAMINE INBOX${CRLF}f6 STORE 1 +FLAGS (\\Seen)${CRLF}`);
  t.match(await raw.read(/^f6 /m), /^f6 NO \[READ-ONLY\]/m);
});

t.test('SEARCH by flags, headers, text, dates and UIDs', async (t) => {
  const clock = new ManualClock('2026-03-01T12:00:00Z');
  const app = await startApp(t, {}, { clock });
  const agent = await app.register();
  await smtpSend(app.smtpPort, { from: 'Alice <alice@example.org>', to: agent.email, subject: 'Quarterly report', text: 'numbers attached' });
  clock.advance(3 * 86_400_000);
  await smtpSend(app.smtpPort, { from: 'bob@example.net', to: agent.email, subject: 'Lunch plans', text: 'pizza on friday' });
  await smtpSend(app.smtpPort, { from: 'carol@example.com', to: agent.email, subject: 'Report draft', text: 'see the pizza numbers' });
  const client = await imapLogin(t, app.imapPort, agent.email, agent.apiKey);
  await client.mailboxOpen('INBOX');
  await client.messageFlagsAdd('2', ['\\Seen'], { uid: true });
  await client.messageFlagsAdd('3', ['\\Flagged'], { uid: true });
  const uids = (query: Record<string, unknown>) => client.search(query, { uid: true });
  t.same(await uids({ all: true }), [1, 2, 3]);
  t.same(await uids({ seen: true }), [2]);
  t.same(await uids({ seen: false }), [1, 3]);
  t.same(await uids({ flagged: true }), [3]);
  t.same(await uids({ subject: 'report' }), [1, 3]);
  t.same(await uids({ from: 'alice' }), [1]);
  t.same(await uids({ body: 'pizza' }), [2, 3]);
  t.same(await uids({ body: 'pizza', seen: false }), [3]);
  t.same(await uids({ since: new Date('2026-03-04T00:00:00Z') }), [2, 3]);
  t.same(await uids({ before: new Date('2026-03-04T00:00:00Z') }), [1]);
  t.same(await uids({ or: [{ from: 'alice' }, { flagged: true }] }), [1, 3]);
  t.same(await uids({ not: { subject: 'report' } }), [2]);
  t.same(await uids({ uid: '2:*' }), [2, 3]);
  t.same(await client.search({ seq: '2:3', seen: false }), [3], 'sequence numbers in and out');
  const raw = await rawImap(t, app.imapPort);
  raw.send(`q1 LOGIN ${agent.email} ${agent.apiKey}${CRLF}q2 SELECT INBOX${CRLF}q3 SEARCH CHARSET UTF-8 TEXT {5}${CRLF}`);
  await raw.read(/^\+ /m);
  raw.send(`pizza SENTSINCE 1-Jan-2020${CRLF}`);
  t.match(await raw.read(/^q3 /m), /^\* SEARCH 2 3\r\nq3 OK/m, 'a search string as a literal');
  raw.send(`q4 SEARCH SINCE 31-Feb-2026${CRLF}`);
  t.match(await raw.read(/^q4 /m), /^q4 BAD /m);
});

t.test('UIDs stay in ascending order across new mail; NOOP and IDLE report it', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  await deliver(app, agent.email, fixture('A', 'a'));
  const raw = await rawImap(t, app.imapPort);
  raw.send(`u1 LOGIN ${agent.email} ${agent.apiKey}${CRLF}u2 SELECT INBOX${CRLF}`);
  t.match(await raw.read(/^u2 /m), /\* 1 EXISTS/);
  await deliver(app, agent.email, fixture('B', 'b'));
  raw.send(`u3 NOOP${CRLF}`);
  t.match(await raw.read(/^u3 /m), /^\* 2 EXISTS\r\n\* 2 RECENT\r\nu3 OK/m);
  raw.send(`u4 IDLE${CRLF}`);
  await raw.read(/^\+ /m);
  await deliver(app, agent.email, fixture('C', 'c'));
  t.match(await raw.read(/^\* 3 EXISTS/m), /\* 3 EXISTS/, 'IDLE reports new mail while waiting');
  raw.send(`DONE${CRLF}`);
  t.match(await raw.read(/^u4 /m), /^u4 OK/m);
  raw.send(`u5 FETCH 1:* (UID)${CRLF}`);
  const fetched = await raw.read(/^u5 /m);
  t.same(
    [...fetched.matchAll(/\* (\d+) FETCH \(UID (\d+)\)/g)].map((match) => [Number(match[1]), Number(match[2])]),
    [
      [1, 1],
      [2, 2],
      [3, 3],
    ],
  );
  raw.send(`u6 UID FETCH 5:* (FLAGS)${CRLF}`);
  t.match(await raw.read(/^u6 /m), /^\* 3 FETCH \(UID 3 FLAGS \(\\Recent\)\)\r\nu6 OK/m, 'n:* beyond the last UID still names the last message');
  const rest = await app.api('GET', '/api/v1/agent/inbox', { key: agent.apiKey });
  t.same(
    rest.body.emails.map((email: any) => email.id),
    ['3', '2', '1'],
    'the same UIDs REST shows as ids',
  );
});

t.test('literals, malformed commands and size caps over a raw socket', async (t) => {
  const app = await startApp(t, { imap: { maxLineBytes: 2048 } });
  const agent = await app.register();
  const raw = await rawImap(t, app.imapPort);
  raw.send(`l1 LOGIN {${Buffer.byteLength(agent.email)}}${CRLF}`);
  t.match(await raw.read(/^\+ /m), /^\+ /m, 'a synchronizing literal gets a continuation');
  raw.send(`${agent.email} {${agent.apiKey.length}+}${CRLF}${agent.apiKey}${CRLF}`);
  t.match(await raw.read(/^l1 /m), /^l1 OK/m, 'a non-synchronizing literal needs none');
  raw.send(`l2 FROBNICATE now${CRLF}`);
  t.match(await raw.read(/^l2 /m), /^l2 BAD unknown command/m);
  raw.send(`l3 FETCH ((${CRLF}`);
  t.match(await raw.read(/^l3 /m), /^l3 BAD /m);
  raw.send(`(((garbage${CRLF}`);
  t.match(await raw.read(/^\* BAD /m), /^\* BAD /m, 'no tag at all');
  raw.send(`l4 SELECT "INBOX${CRLF}`);
  t.match(await raw.read(/^l4 /m), /^l4 BAD /m, 'unterminated quoted string');
  raw.send(`l5 STATUS INBOX {9999}${CRLF}`);
  t.match(await raw.read(/^l5 /m), /^l5 BAD literal of 9999 bytes/m, 'an oversized synchronizing literal is refused before it is sent');
  raw.send(`l6 NOOP${CRLF}`);
  t.match(await raw.read(/^l6 /m), /^l6 OK/m, 'the connection survives all of that');
  raw.send(`l7 NOOP ${'x'.repeat(3000)}${CRLF}`);
  t.match(await raw.read(/^\* BYE /m), /line longer than 2048 bytes/);
  await raw.closed();
});

t.test('SEARCH nested past the depth bound answers a tagged BAD; the session goes on', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  await deliver(app, agent.email, fixture('A', 'a'));
  const raw = await rawImap(t, app.imapPort);
  raw.send(`d1 LOGIN ${agent.email} ${agent.apiKey}${CRLF}d2 SELECT INBOX${CRLF}`);
  await raw.read(/^d2 OK/m);
  const parens = 30_000;
  raw.send(`d3 SEARCH ${'('.repeat(parens)}ALL${')'.repeat(parens)}${CRLF}`);
  t.match(await raw.read(/^d3 /m), /^d3 BAD .*nest/m, '30,000 nested parentheses');
  raw.send(`d4 SEARCH ${'NOT '.repeat(15_000)}ALL${CRLF}`);
  t.match(await raw.read(/^d4 /m), /^d4 BAD SEARCH: keys nest deeper/m, '15,000 NOT');
  raw.send(`d5 SEARCH ${'OR ALL '.repeat(5_000)}ALL${CRLF}`);
  t.match(await raw.read(/^d5 /m), /^d5 BAD SEARCH: keys nest deeper/m, '5,000 OR');
  raw.send(`d6 SEARCH ${'('.repeat(20)}${'NOT '.repeat(20)}ALL${')'.repeat(20)}${CRLF}`);
  t.match(await raw.read(/^d6 /m), /^\* SEARCH 1\r\nd6 OK/m, 'a reasonable nesting still works');
  raw.send(`d7 FETCH 1 (FLAGS ${'('.repeat(1000)}${')'.repeat(1000)})${CRLF}`);
  t.match(await raw.read(/^d7 /m), /^d7 BAD lists nest deeper/m, 'the depth bound holds for every command');
  raw.send(`d8 NOOP${CRLF}`);
  t.match(await raw.read(/^d8 /m), /^d8 OK/m);
});
