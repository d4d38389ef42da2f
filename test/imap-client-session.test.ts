// A mail client's session, scripted with imapflow the way neomutt drives a server: open the
// inbox, read, flag, delete and purge, file a message in a folder, save a draft, reply to a
// message (\Answered), and a second client that follows along by IDLE.
import t from 'tap';
import { startApp } from './helpers/app.js';
import { imapLogin } from './helpers/imap.js';
import { deliverDirect, simpleMessage } from './helpers/mail.js';

t.test('read, delete and purge, move to a folder, save a draft, reply: the mail stays gone and the other client follows', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  const key = agent.apiKey;
  for (const subject of ['newsletter', 'invoice 42', 'lunch?', 'spam offer']) {
    await deliverDirect(app.app, [agent.email], simpleMessage({ subject, to: agent.email, from: 'Friend <friend@example.org>', body: `about ${subject}` }));
  }
  const mutt = await imapLogin(t, app.imapPort, agent.email, key);
  const watcher = await imapLogin(t, app.imapPort, agent.email, key);
  await watcher.mailboxOpen('INBOX');
  const seenByWatcher: string[] = [];
  watcher.on('expunge', (event: { seq?: number; uid?: number }) => seenByWatcher.push(`expunge ${event.seq ?? event.uid}`));
  watcher.on('flags', (event: { uid?: number; flags: Set<string> }) =>
    seenByWatcher.push(
      `flags ${event.uid} ${[...event.flags]
        .filter((flag) => flag !== '\\Recent')
        .sort()
        .join(' ')}`,
    ),
  );
  const idling = watcher.idle();

  // neomutt opens INBOX and lists it: ENVELOPE, FLAGS, size and date of every message.
  const box = await mutt.mailboxOpen('INBOX');
  t.equal(box.exists, 4);
  const index = [];
  for await (const message of mutt.fetch('1:*', { uid: true, envelope: true, flags: true, size: true, internalDate: true })) index.push(message);
  t.same(
    index.map((message) => message.envelope?.subject),
    ['newsletter', 'invoice 42', 'lunch?', 'spam offer'],
  );

  // Reading a message: the body with BODY.PEEK[], then STORE +FLAGS (\Seen), as neomutt does.
  const opened = await mutt.fetchOne('3', { source: true, flags: true }, { uid: true });
  t.ok(opened && !opened.flags?.has('\\Seen'), 'PEEK leaves it unread');
  await mutt.messageFlagsAdd('3', ['\\Seen'], { uid: true });
  t.equal((await app.api('GET', '/api/v1/agent/email/3?markAsRead=false', { key })).body.isRead, true, 'REST shows it read');

  // "d" then "$": mark \Deleted and purge. The mail must stay gone.
  await mutt.messageFlagsAdd('4', ['\\Deleted'], { uid: true });
  t.equal((await app.api('GET', '/api/v1/agent/email/4?markAsRead=false', { key })).body.isDeleted, true, 'marked, not yet gone');
  await mutt.mailboxClose();
  await mutt.mailboxOpen('INBOX');
  t.equal(mutt.mailbox === false ? undefined : mutt.mailbox.exists, 3, 'CLOSE purged it');
  t.equal((await app.api('GET', '/api/v1/agent/email/4', { key })).status, 404);

  // "s" to a folder that does not exist yet: neomutt creates it, then moves.
  await mutt.mailboxCreate('Finance');
  await mutt.messageMove('2', 'Finance', { uid: true });
  t.same(
    (await app.api('GET', '/api/v1/agent/inbox', { key })).body.emails.map((email: { subject: string }) => email.subject),
    ['lunch?', 'newsletter'],
  );
  t.equal((await app.api('GET', '/api/v1/agent/email/1?folder=Finance&markAsRead=false', { key })).body.subject, 'invoice 42');

  // Reply to "lunch?": the client sends it elsewhere, appends to Sent and marks the original \Answered.
  await mutt.append('Sent', simpleMessage({ subject: 'Re: lunch?', to: 'friend@example.org', from: agent.email, body: 'yes' }), ['\\Seen']);
  await mutt.messageFlagsAdd('3', ['\\Answered'], { uid: true });

  // Postpone a draft: APPEND to Drafts with \Draft.
  const draft = await mutt.append('Drafts', simpleMessage({ subject: 'half written', to: 'boss@example.org', from: agent.email }), ['\\Draft', '\\Seen']);
  t.ok(draft);
  const drafts = await app.api('GET', '/api/v1/agent/inbox?folder=Drafts', { key });
  t.same(
    drafts.body.emails.map((email: { subject: string }) => email.subject),
    ['half written'],
  );
  t.equal((await app.api('GET', '/api/v1/agent/email/1?folder=Drafts&markAsRead=false', { key })).body.isDraft, true);

  // A new session later: the purge and the move held.
  await mutt.logout();
  const later = await imapLogin(t, app.imapPort, agent.email, key);
  const status = await later.status('INBOX', { messages: true, unseen: true });
  t.match(status, { messages: 2, unseen: 1 });
  const folders = (await app.api('GET', '/api/v1/agent/folders', { key })).body.folders;
  t.match(Object.fromEntries(folders.map((folder: { name: string; messages: number }) => [folder.name, folder.messages])), {
    INBOX: 2,
    Finance: 1,
    Sent: 1,
    Drafts: 1,
  });

  // The watcher, idling on INBOX all along, heard each change pushed.
  await new Promise((resolve) => setTimeout(resolve, 200));
  await watcher.noop();
  await idling.catch(() => undefined);
  t.ok(seenByWatcher.includes('flags 3 \\Seen'), `\\Seen pushed: ${seenByWatcher.join('; ')}`);
  t.ok(
    seenByWatcher.some((entry) => entry.startsWith('flags 4 \\Deleted')),
    'the \\Deleted mark',
  );
  t.equal(seenByWatcher.filter((entry) => entry.startsWith('expunge')).length, 2, 'the purge and the move');
  t.ok(seenByWatcher.includes('flags 3 \\Answered \\Seen'), 'the reply mark');
});
