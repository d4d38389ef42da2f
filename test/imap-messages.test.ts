// IMAP message commands with imapflow (and a raw socket where the wire matters): APPEND,
// COPY, MOVE, STORE with every flag and keywords, EXPUNGE, UID EXPUNGE, CLOSE, UNSELECT;
// what REST shows of each; \Recent; and the differences seen side by side with Dovecot.
import t from 'tap';
import { startApp } from './helpers/app.js';
import { imapLogin, rawImap } from './helpers/imap.js';
import { deliverDirect, simpleMessage } from './helpers/mail.js';

const CRLF = '\r\n';

t.test('APPEND to any folder with flags and a date, APPENDUID; to a missing folder TRYCREATE; over APPENDLIMIT TOOBIG', async (t) => {
  const app = await startApp(t, { imap: { maxAppendBytes: 4096 } });
  const agent = await app.register();
  const client = await imapLogin(t, app.imapPort, agent.email, agent.apiKey);
  t.equal(client.capabilities.get('APPENDLIMIT'), 4096, 'RFC 7889 APPENDLIMIT');
  const draft = simpleMessage({ subject: 'a draft', to: 'someone@example.net', body: 'not sent yet' });
  const appended = await client.append('Drafts', draft, ['\\Draft', '\\Seen', '$Pending'], new Date('2026-02-03T04:05:06Z'));
  t.ok(appended && appended.uid === 1 && appended.uidValidity, 'APPENDUID (RFC 4315)');
  const read = await app.api('GET', '/api/v1/agent/email/1?folder=Drafts&markAsRead=false', { key: agent.apiKey });
  t.match(read.body, { subject: 'a draft', isRead: true, isDraft: true, isAnswered: false, isDeleted: false, keywords: ['$Pending'], folder: 'Drafts' });
  await client.mailboxOpen('Drafts');
  const fetched = await client.fetchOne('1', { internalDate: true, source: true, flags: true }, { uid: true });
  t.ok(fetched);
  if (!fetched) return;
  t.equal((fetched.internalDate as Date).toISOString(), '2026-02-03T04:05:06.000Z', 'the INTERNALDATE APPEND gave');
  t.ok((fetched.source as Buffer).equals(draft), 'the bytes as appended');
  t.same([...(fetched.flags ?? [])].sort(), ['$Pending', '\\Draft', '\\Recent', '\\Seen']);

  const raw = await rawImap(t, app.imapPort);
  raw.send(`a1 LOGIN ${agent.email} ${agent.apiKey}${CRLF}a2 APPEND Nowhere {5}${CRLF}`);
  t.match(await raw.read(/^(a2 |\+ )/m), /^\+ /m);
  raw.send(`hello${CRLF}`);
  t.match(await raw.read(/^a2 /m), /^a2 NO \[TRYCREATE\]/m, 'RFC 3501 section 6.3.11');
  raw.send(`a3 APPEND INBOX {9000}${CRLF}`);
  t.match(await raw.read(/^a3 /m), /^a3 NO \[TOOBIG\] literal of 9000 bytes is over the 4096-byte limit/m, 'refused before it is sent');
  raw.send(`a4 APPEND INBOX {9000+}${CRLF}${'x'.repeat(9000)}${CRLF}a5 NOOP${CRLF}`);
  const after = await raw.read(/^a5 /m);
  t.match(after, /^a4 NO \[TOOBIG\]/m, 'a non-synchronizing one is read past (RFC 7888), then refused');
  t.match(after, /^a5 OK/m, 'and the session goes on');
  raw.send(`a6 APPEND INBOX (\\Bogus) {3}${CRLF}`);
  t.match(await raw.read(/^(a6 |\+ )/m), /^(\+ |a6 )/m);
  raw.send(`abc${CRLF}`);
  t.match(await raw.read(/^a6 /m), /^a6 BAD unknown system flag/m);
});

t.test('COPY and MOVE with COPYUID; a moved message answers 404 in its old folder over REST; EXPUNGE reaches REST', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  for (const subject of ['one', 'two', 'three']) await deliverDirect(app.app, [agent.email], simpleMessage({ subject, to: agent.email }));
  const client = await imapLogin(t, app.imapPort, agent.email, agent.apiKey);
  await client.mailboxCreate('Archive/2026');
  await client.mailboxOpen('INBOX');
  await client.messageFlagsAdd('1', ['\\Flagged', 'Important'], { uid: true });
  const copied = await client.messageCopy('1:2', 'Archive/2026', { uid: true });
  t.same(copied && Object.fromEntries(copied.uidMap ?? new Map()), { 1: 1, 2: 2 }, 'COPYUID');
  const moved = await client.messageMove('3', 'Archive/2026', { uid: true });
  t.same(moved && Object.fromEntries(moved.uidMap ?? new Map()), { 3: 3 });
  t.equal((await app.api('GET', '/api/v1/agent/email/3', { key: agent.apiKey })).status, 404, 'gone from INBOX');
  const there = await app.api('GET', '/api/v1/agent/email/1?folder=Archive%2F2026&markAsRead=false', { key: agent.apiKey });
  t.match(there.body, { subject: 'one', isStarred: true, keywords: ['Important'] }, 'flags and keywords travel with a copy');
  const inbox = await app.api('GET', '/api/v1/agent/inbox', { key: agent.apiKey });
  t.same(
    inbox.body.emails.map((email: { id: string }) => email.id),
    ['2', '1'],
  );
  await client.messageDelete('2', { uid: true });
  t.same(
    (await app.api('GET', '/api/v1/agent/inbox', { key: agent.apiKey })).body.emails.map((email: { id: string }) => email.id),
    ['1'],
    'deleted and expunged',
  );
  const search = await app.api('GET', '/api/v1/agent/inbox?search=three', { key: agent.apiKey });
  t.equal(search.body.totalMessages, 0, "a moved message leaves the old folder's search");
  const archived = await app.api('GET', '/api/v1/agent/inbox?folder=Archive%2F2026&search=three', { key: agent.apiKey });
  t.equal(archived.body.totalMessages, 1, 'and is found in its new one');
});

t.test('STORE every system flag and keywords; EXPUNGE, UID EXPUNGE, CLOSE and UNSELECT over the wire', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  for (let i = 1; i <= 5; i += 1) await deliverDirect(app.app, [agent.email], simpleMessage({ subject: `m${i}`, to: agent.email }));
  const raw = await rawImap(t, app.imapPort);
  raw.send(`e1 LOGIN ${agent.email} ${agent.apiKey}${CRLF}e2 SELECT INBOX${CRLF}`);
  t.match(await raw.read(/^e2 /m), /\* 5 RECENT/);
  raw.send(`e3 STORE 1:5 +FLAGS (\\Answered \\Draft $Forwarded)${CRLF}`);
  const stored = await raw.read(/^e3 /m);
  t.match(stored, /^\* FLAGS \(\\Answered \\Flagged \\Deleted \\Seen \\Draft \$Forwarded\)/m, 'a new keyword is announced with FLAGS');
  t.match(stored, /^\* 1 FETCH \(FLAGS \(\\Answered \\Draft \$Forwarded \\Recent\)\)/m);
  const read = await app.api('GET', '/api/v1/agent/email/2?markAsRead=false', { key: agent.apiKey });
  t.match(read.body, { isAnswered: true, isDraft: true, keywords: ['$Forwarded'] });
  raw.send(`e4 STORE 2,4 +FLAGS.SILENT (\\Deleted)${CRLF}e5 UID EXPUNGE 4${CRLF}`);
  const uidExpunge = await raw.read(/^e5 /m);
  // RFC 3501 section 7.3.2: RECENT is sent when the folder's size changes; an expunged \Recent
  // message lowers the count, and Dovecot 2.3 answers the same two lines.
  t.match(uidExpunge, /^\* 4 EXPUNGE\r\n\* 4 RECENT\r\ne5 OK/m, 'only the set (RFC 4315)');
  raw.send(`e6 EXPUNGE${CRLF}`);
  t.match(await raw.read(/^e6 /m), /^\* 2 EXPUNGE\r\n\* 3 RECENT\r\ne6 OK/m);
  raw.send(`e7 FETCH 1:* (UID)${CRLF}`);
  t.same(
    [...(await raw.read(/^e7 /m)).matchAll(/UID (\d+)/g)].map((match) => match[1]),
    ['1', '3', '5'],
  );
  raw.send(`e8 STORE 1 +FLAGS (\\Deleted)${CRLF}e9 UNSELECT${CRLF}e10 SELECT INBOX${CRLF}`);
  t.match(await raw.read(/^e10 /m), /\* 3 EXISTS/, 'UNSELECT expunges nothing');
  raw.send(`e11 CLOSE${CRLF}e12 STATUS INBOX (MESSAGES)${CRLF}`);
  const closed = await raw.read(/^e12 /m);
  t.notMatch(closed, /EXPUNGE/, 'CLOSE removes \\Deleted mail silently');
  t.match(closed, /\(MESSAGES 2\)/);
  raw.send(`e13 EXAMINE INBOX${CRLF}e14 EXPUNGE${CRLF}e15 STORE 1 +FLAGS (\\Seen)${CRLF}`);
  const readOnly = await raw.read(/^e15 /m);
  t.match(readOnly, /^e14 NO \[READ-ONLY\]/m);
  t.match(readOnly, /^e15 NO \[READ-ONLY\]/m);
  t.match(readOnly, /\* 0 RECENT/, '\\Recent was taken by the first session (RFC 3501 section 2.3.2)');
});

t.test('what Dovecot does: FETCH past EXISTS is BAD, CRLF on the wire with sizes that agree, ENVELOPE subject and groups', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  const message =
    'From: Someone <a@example.org>\r\nTo: undisclosed-recipients:;\r\nCc: localpart, Name <nodomain>, grp: x@y.z, w@v.u;\r\n' +
    'Subject:\r\n Folded subject\r\nDate: Mon, 2 Mar 2026 10:00:00 +0000\r\n\r\nline1\nline2\r\nline3\rline4\r\n';
  const client = await imapLogin(t, app.imapPort, agent.email, agent.apiKey);
  await client.append('INBOX', Buffer.from(message));
  const raw = await rawImap(t, app.imapPort);
  raw.send(`w1 LOGIN ${agent.email} ${agent.apiKey}${CRLF}w2 SELECT INBOX${CRLF}w3 FETCH 2 FLAGS${CRLF}w4 FETCH 1:3 FLAGS${CRLF}w5 UID FETCH 1:3 UID${CRLF}`);
  const past = await raw.read(/^w5 /m);
  t.match(past, /^w3 BAD /m, 'a sequence number past EXISTS');
  t.match(past, /^w4 BAD /m);
  t.match(past, /^\* 1 FETCH \(UID 1\)\r\nw5 OK/m, 'UIDs past the last are fine');
  raw.send(`w6 FETCH 1 (RFC822.SIZE BODYSTRUCTURE ENVELOPE BODY.PEEK[])${CRLF}`);
  const fetched = await raw.read(/^w6 /m);
  const body = 'line1\r\nline2\r\nline3\r\nline4\r\n';
  const whole = message.replace('line1\nline2\r\nline3\rline4\r\n', body);
  t.match(fetched, `RFC822.SIZE ${whole.length}`, 'the size of what is sent');
  t.match(fetched, `"7BIT" ${body.length} 4 `, 'BODYSTRUCTURE size and lines of what is sent');
  t.match(fetched, `BODY[] {${whole.length}}\r\n${whole})`, 'bare LF and CR go out as CRLF');
  t.match(fetched, '"Folded subject"', 'no leading space from the folded line');
  t.match(fetched, '((NIL NIL "undisclosed-recipients" NIL)(NIL NIL NIL NIL))', 'an empty group');
  t.match(
    fetched,
    '((NIL NIL "localpart" "MISSING_DOMAIN")("Name" NIL "nodomain" "MISSING_DOMAIN")(NIL NIL "grp" NIL)(NIL NIL "x" "y.z")(NIL NIL "w" "v.u")(NIL NIL NIL NIL))',
    'no domain is MISSING_DOMAIN, never NIL (which marks a group), addresses not space-separated',
  );
});

t.test('SEARCH: BODY and TEXT are substrings, KEYWORD, ANSWERED, DELETED, DRAFT, RECENT, NEW, OLD, LARGER', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  await deliverDirect(app.app, [agent.email], simpleMessage({ subject: 'fruit', to: agent.email, body: 'a bokkaberry pie' }));
  await deliverDirect(app.app, [agent.email], simpleMessage({ subject: 'other', to: agent.email, body: 'nothing here', headers: ['X-Tag: okkaberr-header'] }));
  const client = await imapLogin(t, app.imapPort, agent.email, agent.apiKey);
  await client.mailboxOpen('INBOX');
  const uids = (query: Record<string, unknown>) => client.search(query, { uid: true });
  t.same(await uids({ body: 'okkaberr' }), [1], 'a substring inside a word (RFC 3501 section 6.4.4)');
  t.same(await uids({ text: 'okkaberr' }), [1, 2], 'TEXT looks in the header too');
  t.same(await uids({ header: { 'x-tag': 'BERR-HEAD' } }), [2], 'case-insensitive');
  await client.messageFlagsAdd('2', ['\\Answered', 'Todo'], { uid: true });
  t.same(await uids({ answered: true }), [2]);
  t.same(await uids({ keyword: 'Todo' }), [2]);
  t.same(await uids({ unKeyword: 'Todo' }), [1]);
  t.same(await uids({ deleted: true }), []);
  t.same(await uids({ draft: false }), [1, 2]);
  t.same(await uids({ recent: true }), [1, 2]);
  t.same(await uids({ new: true }), [1, 2]);
  t.same(await uids({ old: true }), []);
  t.same(await uids({ larger: 10 }), [1, 2]);
});
