// Removing a message (a draft's copy): the folder count, the full-text entry, and row ids
// that are never used twice, across a restart too.
import t from 'tap';
import { startApp } from './helpers/app.js';
import { plainParsed, plainRaw } from './helpers/mail.js';

const parsed = (subject: string) => plainParsed(subject, `${subject} body`);
const rawOf = (subject: string) => plainRaw(subject, `${subject} body`);

t.test('the highest row id, once removed, is not given again, also after a restart; searches no longer find it', async (t) => {
  const dataDir = t.testdir({});
  const first = await startApp(t, { dataDir });
  const agent = await first.register();
  const { services, store } = first.app;
  const mailbox = await services.mailbox.mailboxOfAccount(agent.userId);
  const append = async (subject: string) => await store.transaction(() => services.mailbox.append(mailbox, 'INBOX', rawOf(subject), parsed(subject)));
  await append('keeper');
  const doomed = await append('doomed');
  const rowOf = (uid: number) =>
    store.db
      .prepare('SELECT m.id FROM messages m JOIN folders f ON f.id = m.folder_id WHERE f.mailbox_id = ? AND m.uid = ?')
      .pluck()
      .get(mailbox.id, uid) as number;
  const doomedRow = rowOf(doomed.uid);
  t.equal((await first.api('GET', '/api/v1/agent/inbox?search=doomed', { key: agent.apiKey })).body.totalMessages, 1);
  t.ok(await store.transaction(() => services.mailbox.remove(mailbox, 'INBOX', doomed.uid)));
  t.notOk(await store.transaction(() => services.mailbox.remove(mailbox, 'INBOX', doomed.uid)), 'once');
  const inbox = await first.api('GET', '/api/v1/agent/inbox', { key: agent.apiKey });
  t.equal(inbox.body.totalMessages, 1);
  t.equal((await first.api('GET', '/api/v1/agent/inbox?search=doomed', { key: agent.apiKey })).body.totalMessages, 0, 'out of the index');
  const next = await append('newcomer');
  t.ok(rowOf(next.uid) > doomedRow, 'a new message takes an id above the removed one');
  t.equal((await first.api('GET', '/api/v1/agent/inbox?search=newcomer', { key: agent.apiKey })).body.totalMessages, 1, 'and is indexed');

  const removed = rowOf(next.uid);
  t.ok(await store.transaction(() => services.mailbox.remove(mailbox, 'INBOX', next.uid)));
  await first.app.stop();
  const second = await startApp(t, { dataDir });
  const again = await second.app.services.mailbox.mailboxOfAccount(agent.userId);
  const after = await second.app.store.transaction(() => second.app.services.mailbox.append(again, 'INBOX', rawOf('reborn'), parsed('reborn')));
  const rebornRow = second.app.store.db
    .prepare('SELECT m.id FROM messages m JOIN folders f ON f.id = m.folder_id WHERE f.mailbox_id = ? AND m.uid = ?')
    .pluck()
    .get(again.id, after.uid) as number;
  t.ok(rebornRow > removed, 'the floor survives a restart');
  t.equal(after.uid, next.uid + 1, 'UIDs never come back either');
  t.equal((await second.api('GET', '/api/v1/agent/inbox?search=newcomer', { key: agent.apiKey })).body.totalMessages, 0);
});

t.test('a row id removed through one process is not given again by another on the same store', async (t) => {
  const dataDir = t.testdir({});
  const first = await startApp(t, { dataDir });
  const second = await startApp(t, { dataDir });
  const agent = await first.register();
  const appendThrough = async (app: typeof first, subject: string) => {
    const mailbox = await app.app.services.mailbox.mailboxOfAccount(agent.userId);
    return await app.app.store.transaction(() => app.app.services.mailbox.append(mailbox, 'INBOX', rawOf(subject), parsed(subject)));
  };
  const rowOf = (uid: number) =>
    first.app.store.db.prepare("SELECT m.id FROM messages m JOIN folders f ON f.id = m.folder_id WHERE f.name = 'INBOX' AND m.uid = ?").pluck().get(uid) as
      | number
      | undefined;
  await appendThrough(second, 'before');
  const newest = await appendThrough(first, 'newest');
  const removedRow = rowOf(newest.uid) as number;
  const mailbox = await first.app.services.mailbox.mailboxOfAccount(agent.userId);
  t.ok(await first.app.store.transaction(() => first.app.services.mailbox.remove(mailbox, 'INBOX', newest.uid)), 'removed through the first');
  const next = await appendThrough(second, 'after');
  t.ok((rowOf(next.uid) as number) > removedRow, 'the second, which had read the store before, takes an id above the removed one');
});
