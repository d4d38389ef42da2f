// Keeping a client in step: IDLE pushes EXISTS, EXPUNGE and FETCH FLAGS from the store's
// after-commit feed (other sessions, REST), CONDSTORE (RFC 7162) mod-sequences, QRESYNC's
// VANISHED, ENABLE and ID.
import t from 'tap';
import { startApp } from './helpers/app.js';
import { imapLogin, rawImap } from './helpers/imap.js';
import { deliverDirect, simpleMessage } from './helpers/mail.js';

const CRLF = '\r\n';

t.test('IDLE pushes new mail, flag changes and expunges made elsewhere (another session, REST)', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  for (const subject of ['a', 'b', 'c']) await deliverDirect(app.app, [agent.email], simpleMessage({ subject, to: agent.email }));
  const idler = await rawImap(t, app.imapPort);
  idler.send(`i1 LOGIN ${agent.email} ${agent.apiKey}${CRLF}i2 SELECT INBOX${CRLF}`);
  await idler.read(/^i2 OK/m);
  idler.send(`i3 IDLE${CRLF}`);
  await idler.read(/^\+ /m);
  const other = await imapLogin(t, app.imapPort, agent.email, agent.apiKey);
  await other.mailboxOpen('INBOX');
  await other.messageFlagsAdd('2', ['\\Flagged'], { uid: true });
  t.match(
    await idler.read(/^\* 2 FETCH .*\r\n/m),
    /^\* 2 FETCH \(UID 2 FLAGS \(\\Flagged \\Recent\)\)\r$/m,
    'a flag set by another session (\\Recent: this session selected first)',
  );
  await app.api('GET', '/api/v1/agent/email/3', { key: agent.apiKey });
  t.match(await idler.read(/^\* 3 FETCH .*\r\n/m), /^\* 3 FETCH \(UID 3 FLAGS \(\\Seen \\Recent\)\)\r$/m, 'a REST read marks it read');
  await other.messageDelete('1', { uid: true });
  t.match(await idler.read(/^\* 1 EXPUNGE\r\n/m), /^\* 1 EXPUNGE/m, 'an expunge by another session');
  const deleted = await app.api('DELETE', '/api/v1/agent/email/2', { key: agent.apiKey });
  t.match(deleted.body, { deleted: true, expunged: false, folder: 'Trash' });
  t.match(await idler.read(/^\* 1 EXPUNGE\r\n/m), /^\* 1 EXPUNGE/m, 'a REST delete moves it out of INBOX');
  await deliverDirect(app.app, [agent.email], simpleMessage({ subject: 'd', to: agent.email }));
  t.match(await idler.read(/^\* 2 EXISTS\r\n/m), /^\* 2 EXISTS/m, 'new mail');
  idler.send(`DONE${CRLF}`);
  t.match(await idler.read(/^i3 /m), /^i3 OK IDLE terminated/m);
  idler.send(`i4 FETCH 1:* (UID FLAGS)${CRLF}`);
  t.match(
    await idler.read(/^i4 /m),
    /^\* 1 FETCH \(UID 3 FLAGS \(\\Seen \\Recent\)\)\r\n\* 2 FETCH \(UID 4 FLAGS \(\\Recent\)\)\r\ni4 OK/m,
    'the view is what the server has',
  );
});

t.test('no EXPUNGE while FETCH, STORE or SEARCH answers; it comes with the next command (RFC 3501 section 7.4.1)', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  for (const subject of ['a', 'b']) await deliverDirect(app.app, [agent.email], simpleMessage({ subject, to: agent.email }));
  const raw = await rawImap(t, app.imapPort);
  raw.send(`h1 LOGIN ${agent.email} ${agent.apiKey}${CRLF}h2 SELECT INBOX${CRLF}`);
  await raw.read(/^h2 OK/m);
  await app.api('DELETE', '/api/v1/agent/email/1', { key: agent.apiKey });
  raw.send(`h3 FETCH 1:2 (UID)${CRLF}`);
  const fetched = await raw.read(/^h3 /m);
  t.notMatch(fetched, /EXPUNGE/);
  t.match(fetched, /^\* 2 FETCH \(UID 2\)\r\nh3 OK/m, 'the expunged message has no FETCH response; the numbers stay as the client knows them');
  raw.send(`h4 NOOP${CRLF}`);
  t.match(await raw.read(/^h4 /m), /^\* 1 EXPUNGE\r\nh4 OK/m);
});

t.test('CONDSTORE: HIGHESTMODSEQ, FETCH MODSEQ and CHANGEDSINCE, STORE UNCHANGEDSINCE and MODIFIED, SEARCH MODSEQ', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  for (const subject of ['a', 'b', 'c']) await deliverDirect(app.app, [agent.email], simpleMessage({ subject, to: agent.email }));
  const raw = await rawImap(t, app.imapPort);
  raw.send(`c1 LOGIN ${agent.email} ${agent.apiKey}${CRLF}c2 SELECT INBOX (CONDSTORE)${CRLF}`);
  const selected = await raw.read(/^c2 /m);
  const highest = Number(/HIGHESTMODSEQ (\d+)/.exec(selected)?.[1]);
  t.ok(highest >= 3, 'HIGHESTMODSEQ at SELECT');
  raw.send(`c3 STORE 2 +FLAGS (\\Seen)${CRLF}`);
  const stored = await raw.read(/^c3 /m);
  const modseq = Number(/MODSEQ \((\d+)\)/.exec(stored)?.[1]);
  t.ok(modseq > highest, 'a change takes a greater mod-sequence');
  raw.send(`c4 FETCH 1:* (UID FLAGS) (CHANGEDSINCE ${highest})${CRLF}`);
  t.match(
    await raw.read(/^c4 /m),
    new RegExp(`^\\* 2 FETCH \\(UID 2 FLAGS \\(\\\\Seen \\\\Recent\\) MODSEQ \\(${modseq}\\)\\)\\r\\nc4 OK`, 'm'),
    'only what changed',
  );
  raw.send(`c5 STORE 1:3 (UNCHANGEDSINCE ${highest}) +FLAGS (\\Flagged)${CRLF}`);
  const conditional = await raw.read(/^c5 /m);
  t.match(conditional, /^c5 OK \[MODIFIED 2\]/m, 'message 2 changed since');
  t.match(conditional, /^\* 1 FETCH \(FLAGS \(\\Flagged \\Recent\) MODSEQ/m);
  raw.send(`c6 UID SEARCH MODSEQ ${modseq}${CRLF}`);
  t.match(await raw.read(/^c6 /m), /^\* SEARCH 1 2 3 \(MODSEQ \d+\)\r\nc6 OK/m);
  raw.send(`c7 STATUS Sent (HIGHESTMODSEQ MESSAGES)${CRLF}`);
  t.match(await raw.read(/^c7 /m), /^\* STATUS "Sent" \(HIGHESTMODSEQ \d+ MESSAGES 0\)/m);
});

t.test('QRESYNC: ENABLE, SELECT (QRESYNC ...) answers VANISHED (EARLIER) and the flags changed; expunges as VANISHED', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  for (const subject of ['a', 'b', 'c', 'd']) await deliverDirect(app.app, [agent.email], simpleMessage({ subject, to: agent.email }));
  const first = await rawImap(t, app.imapPort);
  first.send(`q1 LOGIN ${agent.email} ${agent.apiKey}${CRLF}q2 ENABLE QRESYNC${CRLF}q3 SELECT INBOX${CRLF}`);
  const opened = await first.read(/^q3 /m);
  t.match(opened, /^\* ENABLED QRESYNC CONDSTORE\r$/m);
  const uidValidity = /UIDVALIDITY (\d+)/.exec(opened)?.[1];
  const known = Number(/HIGHESTMODSEQ (\d+)/.exec(opened)?.[1]);
  first.send(`q4 LOGOUT${CRLF}`);
  await first.closed();
  const client = await imapLogin(t, app.imapPort, agent.email, agent.apiKey);
  await client.mailboxOpen('INBOX');
  await client.messageDelete('2', { uid: true });
  await client.messageFlagsAdd('3', ['\\Answered'], { uid: true });
  const again = await rawImap(t, app.imapPort);
  again.send(`r1 LOGIN ${agent.email} ${agent.apiKey}${CRLF}r2 ENABLE QRESYNC${CRLF}r3 SELECT INBOX (QRESYNC (${uidValidity} ${known} 1:4))${CRLF}`);
  const resync = await again.read(/^r3 /m);
  t.match(resync, /^\* VANISHED \(EARLIER\) 2\r$/m, 'what was expunged since');
  t.match(resync, /^\* 2 FETCH \(UID 3 FLAGS \(\\Answered\) MODSEQ \(\d+\)\)\r$/m, 'what changed since');
  again.send(`r4 UID FETCH 1:* (FLAGS) (CHANGEDSINCE ${known} VANISHED)${CRLF}`);
  t.match(await again.read(/^r4 /m), /^\* VANISHED \(EARLIER\) 2\r\n\* 2 FETCH \(UID 3 FLAGS \(\\Answered\) MODSEQ \(\d+\)\)\r\nr4 OK/m);
  again.send(`r5 UID STORE 4 +FLAGS.SILENT (\\Deleted)${CRLF}r6 EXPUNGE${CRLF}`);
  t.match(await again.read(/^r6 /m), /^\* VANISHED 4\r\nr6 OK/m, 'RFC 7162 section 3.2.10: VANISHED instead of EXPUNGE');
  again.send(`r7 SELECT Sent${CRLF}`);
  t.match(await again.read(/^r7 /m), /^\* OK \[CLOSED\]/m, 'RFC 7162 section 3.2.11');
});

t.test('ENABLE only after LOGIN and before SELECT; ID in any state', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  const raw = await rawImap(t, app.imapPort);
  raw.send(`n1 ID ("name" "test client" "version" "1")${CRLF}n2 ENABLE CONDSTORE${CRLF}`);
  const before = await raw.read(/^n2 /m);
  t.match(before, /^\* ID \("name" "agentpost" "vendor" "agentpost"\)\r\nn1 OK/m);
  t.match(before, /^n2 BAD /m);
  raw.send(`n3 LOGIN ${agent.email} ${agent.apiKey}${CRLF}n4 ENABLE CONDSTORE X-UNKNOWN${CRLF}n5 ID NIL${CRLF}`);
  const after = await raw.read(/^n5 /m);
  t.match(after, /^\* ENABLED CONDSTORE\r\nn4 OK/m, 'unknown extensions are left out');
  t.match(after, /^n5 OK/m);
});
