// IMAP folders with a real client (imapflow) and, where the client hides the wire, a raw
// socket: CREATE, DELETE, RENAME, SUBSCRIBE, UNSUBSCRIBE, LIST (LIST-EXTENDED, LIST-STATUS,
// SPECIAL-USE), LSUB, STATUS, NAMESPACE; UIDVALIDITY of a name made again; REST's view.
import t from 'tap';
import { startApp } from './helpers/app.js';
import { imapLogin, rawImap } from './helpers/imap.js';
import { deliverDirect, simpleMessage } from './helpers/mail.js';

const CRLF = '\r\n';

t.test('CREATE (with parents), LIST with children, RENAME with the folders below, DELETE', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  const client = await imapLogin(t, app.imapPort, agent.email, agent.apiKey);
  const created = await client.mailboxCreate('Projects/2026/Q1');
  t.equal(created.path, 'Projects/2026/Q1');
  const listed = await client.list();
  const byPath = new Map(listed.map((folder) => [folder.path, folder]));
  t.ok(byPath.has('Projects') && byPath.has('Projects/2026'), 'the parents are made too (RFC 3501 section 6.3.3)');
  t.ok(byPath.get('Projects')?.flags.has('\\HasChildren'));
  t.ok(byPath.get('Projects/2026/Q1')?.flags.has('\\HasNoChildren'));
  t.equal(byPath.get('Projects')?.delimiter, '/');
  t.equal((await client.mailboxCreate('Projects/2026/Q1')).created, false, 'an existing name (ALREADYEXISTS, which imapflow reports as not created)');

  await deliverDirect(app.app, [agent.email], simpleMessage({ subject: 'to be filed', to: agent.email }));
  await client.mailboxOpen('INBOX');
  await client.messageCopy('1', 'Projects/2026/Q1', { uid: true });
  await client.mailboxClose();
  const renamed = await client.mailboxRename('Projects', 'Work');
  t.equal(renamed.newPath, 'Work');
  const after = (await client.list()).map((folder) => folder.path);
  t.ok(after.includes('Work/2026/Q1') && !after.some((path) => path.startsWith('Projects')), 'the folders below move with it');
  t.match(await client.status('Work/2026/Q1', { messages: true }), { messages: 1 }, 'with their mail');

  const raw = await rawImap(t, app.imapPort);
  raw.send(`d1 LOGIN ${agent.email} ${agent.apiKey}${CRLF}d2 DELETE Work${CRLF}`);
  t.match(await raw.read(/^d2 /m), /^d2 NO \[INUSE\] .*below it/m, 'a folder with folders below it is not deleted');
  raw.send(`d3 DELETE Work/2026/Q1${CRLF}d4 DELETE INBOX${CRLF}d5 DELETE Nope${CRLF}d6 CREATE "a//b"${CRLF}d7 CREATE "x*"${CRLF}`);
  const answers = await raw.read(/^d7 /m);
  t.match(answers, /^d3 OK/m);
  t.match(answers, /^d4 NO /m, 'INBOX cannot be deleted');
  t.match(answers, /^d5 NO \[NONEXISTENT\]/m);
  t.match(answers, /^d6 NO \[CANNOT\]/m, 'an empty level');
  t.match(answers, /^d7 NO \[CANNOT\]/m, 'a wildcard');
  raw.send(`d8 CREATE Work${CRLF}`);
  t.match(await raw.read(/^d8 /m), /^d8 NO \[ALREADYEXISTS\]/m);
});

t.test('a name made again after DELETE gets a greater UIDVALIDITY; REST reads of the old UIDs answer 404', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  const client = await imapLogin(t, app.imapPort, agent.email, agent.apiKey);
  await client.mailboxCreate('Receipts');
  await client.append('Receipts', simpleMessage({ subject: 'receipt one', to: agent.email }));
  const statusOf = async (path: string) => {
    const status = await client.status(path, { uidValidity: true, messages: true, uidNext: true });
    if (!status) throw new Error(`no STATUS of ${path}`);
    return status;
  };
  const first = await statusOf('Receipts');
  const read = await app.api('GET', '/api/v1/agent/email/1?folder=Receipts&markAsRead=false', { key: agent.apiKey });
  t.equal(read.status, 200);
  await client.mailboxDelete('Receipts');
  t.equal((await app.api('GET', '/api/v1/agent/email/1?folder=Receipts', { key: agent.apiKey })).status, 404, 'the folder is gone');
  await client.mailboxCreate('Receipts');
  const second = await statusOf('Receipts');
  t.ok(BigInt(second.uidValidity ?? 0) > BigInt(first.uidValidity ?? 0), 'RFC 3501 section 2.3.1.1: greater than before');
  t.equal(second.messages, 0);
  t.equal(second.uidNext, 1);
  t.equal((await app.api('GET', '/api/v1/agent/email/1?folder=Receipts', { key: agent.apiKey })).status, 404, 'the old UID is not in the new folder');
  const stale = await app.api('GET', `/api/v1/agent/email/1?folder=Receipts&uidValidity=${first.uidValidity}`, { key: agent.apiKey });
  t.equal(stale.status, 409, 'a reader holding the old uidValidity is told the folder changed');
});

t.test('SUBSCRIBE, UNSUBSCRIBE, LSUB and LIST (SUBSCRIBED) RETURN (CHILDREN STATUS ...)', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  await deliverDirect(app.app, [agent.email], simpleMessage({ subject: 'hello', to: agent.email }));
  const client = await imapLogin(t, app.imapPort, agent.email, agent.apiKey);
  await client.mailboxCreate('Lists/Rust');
  await client.mailboxSubscribe('Lists/Rust');
  await client.mailboxUnsubscribe('Sent');
  const raw = await rawImap(t, app.imapPort);
  raw.send(`s1 LOGIN ${agent.email} ${agent.apiKey}${CRLF}s2 LSUB "" *${CRLF}`);
  const lsub = await raw.read(/^s2 /m);
  t.match(lsub, /^\* LSUB \([^)]*\) "\/" "Lists\/Rust"\r$/m);
  t.notMatch(lsub, /"Sent"/, 'unsubscribed');
  t.notMatch(lsub, /"Lists"\r/, 'only subscribed names');
  raw.send(`s3 LIST (SUBSCRIBED RECURSIVEMATCH) "" "%" RETURN (CHILDREN)${CRLF}`);
  const recursive = await raw.read(/^s3 /m);
  t.match(recursive, /^\* LIST \(\) "\/" "Lists" \("CHILDINFO" \("SUBSCRIBED"\)\)\r$/m, 'RFC 5258 CHILDINFO for a parent of a subscribed folder');
  t.match(recursive, /^\* LIST \(\\HasNoChildren \\Subscribed\) "\/" "INBOX"/m);
  raw.send(`s4 LIST "" (INBOX Lists/*) RETURN (STATUS (MESSAGES UNSEEN UIDNEXT))${CRLF}`);
  const status = await raw.read(/^s4 /m);
  // RFC 5258 section 3.4: an extended LIST without RETURN (CHILDREN) may leave out \HasChildren
  // and \HasNoChildren, and Dovecot 2.3 leaves them out (here and for LIST (SPECIAL-USE) below).
  t.match(status, /^\* LIST \(\) "\/" "INBOX"\r\n\* STATUS "INBOX" \(MESSAGES 1 UNSEEN 1 UIDNEXT 2\)\r$/m, 'RFC 5819 LIST-STATUS');
  t.match(status, /^\* STATUS "Lists\/Rust" \(MESSAGES 0 UNSEEN 0 UIDNEXT 1\)\r$/m);
  raw.send(`s5 LIST (SPECIAL-USE) "" *${CRLF}`);
  const special = await raw.read(/^s5 /m);
  t.same(
    [...special.matchAll(/^\* LIST \((\\\w+)\) "\/" "(\w+)"/gm)].map((match) => `${match[2]}=${match[1]}`).sort(),
    ['Archive=\\Archive', 'Drafts=\\Drafts', 'Junk=\\Junk', 'Sent=\\Sent', 'Trash=\\Trash'],
    'RFC 6154 selection',
  );
  raw.send(`s6 UNSUBSCRIBE Nothing${CRLF}s7 SUBSCRIBE Nothing${CRLF}s8 NAMESPACE${CRLF}s9 LIST "" ""${CRLF}`);
  const rest = await raw.read(/^s9 /m);
  t.match(rest, /^s6 NO /m);
  t.match(rest, /^s7 NO \[NONEXISTENT\]/m);
  t.match(rest, /^\* NAMESPACE \(\("" "\/"\)\) NIL NIL\r\ns8 OK/m);
  t.match(rest, /^\* LIST \(\\Noselect\) "\/" ""\r\ns9 OK/m);
});

t.test('folder names in modified UTF-7 on the wire, Unicode in REST; STATUS', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  const client = await imapLogin(t, app.imapPort, agent.email, agent.apiKey);
  await client.mailboxCreate('Entwürfe & Notizen');
  const raw = await rawImap(t, app.imapPort);
  raw.send(`m1 LOGIN ${agent.email} ${agent.apiKey}${CRLF}m2 LIST "" "Entw*"${CRLF}`);
  t.match(await raw.read(/^m2 /m), /^\* LIST \(\\HasNoChildren\) "\/" "Entw&APw-rfe &- Notizen"\r$/m, 'RFC 3501 section 5.1.3');
  const folders = await app.api('GET', '/api/v1/agent/folders', { key: agent.apiKey });
  t.ok(folders.body.folders.some((folder: { name: string }) => folder.name === 'Entwürfe & Notizen'));
  raw.send(`m3 STATUS "Entw&APw-rfe &- Notizen" (MESSAGES RECENT UIDNEXT UIDVALIDITY UNSEEN HIGHESTMODSEQ)${CRLF}`);
  t.match(await raw.read(/^m3 /m), /^\* STATUS "Entw&APw-rfe &- Notizen" \(MESSAGES 0 RECENT 0 UIDNEXT 1 UIDVALIDITY \d+ UNSEEN 0 HIGHESTMODSEQ 1\)\r$/m);
  raw.send(`m4 STATUS INBOX (BOGUS)${CRLF}`);
  t.match(await raw.read(/^m4 /m), /^m4 BAD /m);
});

t.test('a mailbox holds at most imap.maxFolders folders', async (t) => {
  const app = await startApp(t, { imap: { maxFolders: 8 } });
  const agent = await app.register();
  const raw = await rawImap(t, app.imapPort);
  raw.send(`l1 LOGIN ${agent.email} ${agent.apiKey}${CRLF}l2 LIST "" *${CRLF}l3 CREATE One${CRLF}l4 CREATE Two${CRLF}l5 CREATE Three${CRLF}`);
  const answers = await raw.read(/^l5 /m);
  t.match(answers, /^l3 OK/m);
  t.match(answers, /^l4 OK/m);
  t.match(answers, /^l5 NO \[LIMIT\] a mailbox holds at most 8 folders/m);
});

t.test('STATUS counts UNSEEN and RECENT only when asked: a client polling MESSAGES costs one row read', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  await deliverDirect(app.app, [agent.email], simpleMessage({ subject: 'one', to: agent.email }));
  await deliverDirect(app.app, [agent.email], simpleMessage({ subject: 'two', to: agent.email }));
  const { imap } = app.app.store;
  const counted = { unseen: 0, recent: 0 };
  const unseenCount = imap.unseenCount;
  const uidsAfter = imap.uidsAfter;
  imap.unseenCount = (...args) => ((counted.unseen += 1), unseenCount(...args));
  imap.uidsAfter = (...args) => ((counted.recent += 1), uidsAfter(...args));
  const raw = await rawImap(t, app.imapPort);
  raw.send(`s1 LOGIN ${agent.email} ${agent.apiKey}${CRLF}s2 STATUS INBOX (MESSAGES UIDNEXT)${CRLF}`);
  t.match(await raw.read(/^s2 /m), /^\* STATUS "INBOX" \(MESSAGES 2 UIDNEXT 3\)\r\ns2 OK/m);
  t.same(counted, { unseen: 0, recent: 0 }, 'nothing counted for MESSAGES and UIDNEXT');
  raw.send(`s3 STATUS INBOX (UNSEEN RECENT)${CRLF}`);
  t.match(await raw.read(/^s3 /m), /^\* STATUS "INBOX" \(UNSEEN 2 RECENT 2\)\r\ns3 OK/m);
  t.same(counted, { unseen: 1, recent: 1 }, 'each counted once when asked');
});
