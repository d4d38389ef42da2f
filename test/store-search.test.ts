import { rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t, { type Test } from 'tap';
import { INDEXED_TEXT_MAX_CHARS, indexedText } from '../src/core/search-index.js';
import type { ParsedMessage } from '../src/mime/parse.js';
import { toFtsQuery } from '../src/services/mail/fts-query.js';
import { startApp } from './helpers/app.js';
import { folderOf, plainParsed, plainRaw } from './helpers/mail.js';
import { smtpSendRaw } from './helpers/smtp.js';

/**
 * The full-text index: its own file written by the search worker (store/search-db.ts),
 * scoped by folder inside FTS5, fed from a queue in batches, and rebuilt from raw bytes
 * for mail it does not have.
 */

/** A read-only look into an app's index file. */
const indexOf = (t: Test, app: { store: { searchFile: string } }) => {
  const db = new Database(app.store.searchFile, { readonly: true });
  t.teardown(() => db.close());
  return {
    segments: () => db.prepare('SELECT count(*) FROM messages_fts_data').pluck().get() as number,
    hits: (match: string) => db.prepare('SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?').pluck().get(match) as number,
  };
};

const until = async (condition: () => boolean | Promise<boolean>, what: string): Promise<void> => {
  for (let waited = 0; !(await condition()); waited += 1) {
    if (waited === 200) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
};

const parsed = plainParsed;
const rawOf = plainRaw;

t.test('a search stays in its folder and mailbox, counts every match and pages newest first', async (t) => {
  const { app, register } = await startApp(t);
  const alice = await register();
  const bob = await register();
  const mailboxOf = async (email: string) => (await app.services.mailbox.mailboxForAddress(email))!;
  const expected: Record<string, number[]> = { common: [], rare: [], both: [] };
  await app.store.transaction(async () => {
    for (let i = 1; i <= 2300; i += 1) {
      const words = ['common', ...(i % 400 === 0 ? ['rare'] : [])];
      await app.services.mailbox.append(await mailboxOf(alice.email), 'INBOX', rawOf(`message ${i}`, 'x'), parsed(`message ${i}`, words.join(' ')));
      for (const word of words) expected[word].unshift(i);
      if (words.length === 2) expected.both.unshift(i);
      if (i % 10 === 0) {
        await app.services.mailbox.append(await mailboxOf(bob.email), 'INBOX', rawOf('other', 'x'), parsed('other', 'common rare'));
        await app.services.mailbox.append(await mailboxOf(alice.email), 'Sent', rawOf('sent', 'x'), parsed('sent', 'common rare'));
      }
    }
  });
  await app.services.searchIndex.catchUp();
  const inbox = await folderOf(app, alice.email);
  const uids = (page: { items: { uid: number }[] }) => page.items.map((item) => item.uid);
  for (const [word, search] of [
    ['common', 'common'],
    ['rare', 'rare'],
    ['both', 'common rare'],
  ] as const) {
    for (const [limit, offset] of [
      [50, 0],
      [7, 3],
      [100, expected[word].length - 2],
      [10, expected[word].length],
    ]) {
      const page = await app.store.messages.search(inbox.id, toFtsQuery(search)!, limit, offset);
      t.equal(page.total, expected[word].length, `${word}: total`);
      t.same(uids(page), expected[word].slice(offset, offset + limit), `${word}: limit ${limit} offset ${offset}`);
    }
  }
  const principal = await app.services.auth.authenticate(alice.apiKey);
  const listed = await app.services.mailbox.list(principal, { folder: 'INBOX', limit: 3, offset: 0, search: 'RARE' });
  t.same(
    listed.emails.map((email) => email.id),
    expected.rare.slice(0, 3).map(String),
  );
  t.equal(listed.totalMessages, expected.rare.length);
  const folderToken = await app.services.mailbox.list(principal, { folder: 'INBOX', limit: 3, offset: 0, search: `f${inbox.id}` });
  t.equal(folderToken.totalMessages, 0, 'a search never matches the folder token');
});

t.test('a total asked again stays exact once new mail is indexed and once a message is removed', async (t) => {
  const { app, register } = await startApp(t);
  const agent = await register();
  const mailbox = (await app.services.mailbox.mailboxForAddress(agent.email))!;
  const principal = await app.services.auth.authenticate(agent.apiKey);
  const append = async (subject: string) =>
    await app.store.transaction(() => app.services.mailbox.append(mailbox, 'INBOX', rawOf(subject, 'x'), parsed(subject, 'often')));
  const total = async () => (await app.services.mailbox.list(principal, { folder: 'INBOX', limit: 1, offset: 0, search: 'often' })).totalMessages;
  await append('one');
  const two = await append('two');
  t.same([await total(), await total()], [2, 2]);
  await append('three');
  t.equal(await total(), 3, 'a message indexed since');
  await app.store.transaction(() => app.services.mailbox.append(mailbox, 'Sent', rawOf('sent', 'x'), parsed('sent', 'often')));
  t.equal(await total(), 3, 'a message indexed since in another folder');
  t.ok(await app.store.transaction(() => app.services.mailbox.remove(mailbox, 'INBOX', two.uid)));
  t.equal(await total(), 2, 'a message removed since');
});

t.test('stored mail waits in memory, not in the store; a search hands it to the index first; a batch is one index segment that moves the mark', async (t) => {
  // The indexer waits longer than the test: on a loaded machine the 20 commits below took more than its 250 ms.
  const { app, register } = await startApp(t, {}, { manual: ['search'] });
  const agent = await register();
  const mailbox = (await app.services.mailbox.mailboxForAddress(agent.email))!;
  const index = indexOf(t, app);
  const queued = () => app.services.searchIndex.backlog();
  const before = index.segments();
  await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      app.store.groupCommit(() => app.services.mailbox.append(mailbox, 'INBOX', rawOf(`note ${i}`, 'x'), parsed(`note ${i}`, `word${i} shared`))),
    ),
  );
  t.equal(await queued(), 20, 'each stored message waits for the index');
  const tables = app.store.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'search%'").pluck().all();
  t.same(tables.sort(), ['search_backfill', 'search_removals', 'search_waiting'], 'and the store holds no queue of them');
  t.equal(app.store.db.prepare('SELECT count(*) FROM search_waiting').pluck().get(), 1, "only this node's one row, at or below the texts waiting");
  t.equal(index.segments(), before, 'storing mail writes nothing to the index');
  const principal = await app.services.auth.authenticate(agent.apiKey);
  const found = await app.services.mailbox.list(principal, { folder: 'INBOX', limit: 50, offset: 0, search: 'shared' });
  t.equal(found.totalMessages, 20, 'the search saw every queued message');
  t.ok(index.segments() - before <= 2, `rows added to messages_fts_data: ${index.segments() - before}`);
  await until(async () => (await queued()) === 0, 'nothing waits once the index has the messages');
  t.equal(await app.store.searchIndex.indexedThrough(), await app.store.searchIndex.lastMessageRowId(), "the index's mark is the last message");
});

t.test('the indexer drains the queue without a search', async (t) => {
  const { app, register } = await startApp(t);
  const agent = await register();
  const mailbox = (await app.services.mailbox.mailboxForAddress(agent.email))!;
  await app.store.groupCommit(() => app.services.mailbox.append(mailbox, 'INBOX', rawOf('hello', 'x'), parsed('hello', 'indexed later')));
  t.ok((await app.services.searchIndex.backlog()) > 0);
  await until(async () => (await app.services.searchIndex.backlog()) === 0, 'the indexer');
  t.equal(indexOf(t, app).hits('indexed'), 1);
});

t.test('without a search worker the index is written on the main thread, the same way', async (t) => {
  const { app, register } = await startApp(t, {}, { searchWorker: null });
  const agent = await register();
  const mailbox = (await app.services.mailbox.mailboxForAddress(agent.email))!;
  await app.store.groupCommit(() => app.services.mailbox.append(mailbox, 'INBOX', rawOf('inline', 'x'), parsed('inline', 'written inline')));
  const principal = await app.services.auth.authenticate(agent.apiKey);
  const found = await app.services.mailbox.list(principal, { folder: 'INBOX', limit: 5, offset: 0, search: 'inline' });
  t.same(
    found.emails.map((email) => email.subject),
    ['inline'],
  );
  await until(async () => (await app.services.searchIndex.backlog()) === 0, 'nothing to wait');
});

/** Starts an app in `dataDir`, stores one message with these parsed fields, and stops it. */
const storeOneAndStop = async (t: Test, dataDir: string, raw: Buffer, fields: ParsedMessage) => {
  const first = await startApp(t, { dataDir });
  const agent = await first.register();
  const mailbox = (await first.app.services.mailbox.mailboxForAddress(agent.email))!;
  await first.app.store.groupCommit(() => first.app.services.mailbox.append(mailbox, 'INBOX', raw, fields));
  await first.app.stop();
  return agent;
};

t.test('a store without its index file (an upgrade from version 9) is indexed from its raw bytes at start', async (t) => {
  const dataDir = t.testdir({});
  const raw = Buffer.from('From: "Ada Archer" <ada@example.org>\r\nSubject: Quarterly plans\r\n\r\nThe tacos are on Friday.\r\n');
  const agent = await storeOneAndStop(t, dataDir, raw, parsed('listed subject', 'none of the words'));
  // As version 9 left it: the index inside the store (migration 7), no index file.
  const db = new Database(join(dataDir, 'agentpost.db'));
  db.exec(`CREATE VIRTUAL TABLE messages_fts USING fts5(folder, subject, participants, body, content = '', contentless_delete = 1);
    DELETE FROM schema_migrations WHERE version = 10`);
  db.close();
  for (const suffix of ['', '-wal', '-shm']) rmSync(join(dataDir, `agentpost.search.db${suffix}`), { force: true });
  const second = await startApp(t, { dataDir });
  t.equal(await second.app.store.searchIndex.backfillCount(), 0, 'start-up indexed everything');
  t.notOk(second.app.store.db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'messages_fts'").get(), 'the old index is gone');
  const principal = await second.app.services.auth.authenticate(agent.apiKey);
  for (const search of ['tacos', 'archer', 'quarterly', 'ada@example.org']) {
    const found = await second.app.services.mailbox.list(principal, { folder: 'INBOX', limit: 5, offset: 0, search });
    // The listing shows the stored fields; the words are only in the raw bytes.
    t.same(
      found.emails.map((email) => email.subject),
      ['listed subject'],
      `${search}: found through the raw bytes`,
    );
  }
  const mailbox = (await second.app.services.mailbox.mailboxForAddress(agent.email))!;
  await second.app.store.groupCommit(() => second.app.services.mailbox.append(mailbox, 'INBOX', rawOf('after', 'x'), parsed('after the upgrade', 'newcomer')));
  const newer = await second.app.services.mailbox.list(principal, { folder: 'INBOX', limit: 5, offset: 0, search: 'newcomer' });
  t.same(
    newer.emails.map((email) => email.subject),
    ['after the upgrade'],
    'mail stored after the upgrade is queued and found',
  );
});

t.test('index entries above the last stored message (a store tail lost with the power) are dropped at start', async (t) => {
  const dataDir = t.testdir({});
  const agent = await storeOneAndStop(t, dataDir, rawOf('kept', 'x'), parsed('kept', 'survivor'));
  const last = (() => {
    const db = new Database(join(dataDir, 'agentpost.db'), { readonly: true });
    try {
      return db.prepare('SELECT max(id) FROM messages').pluck().get() as number;
    } finally {
      db.close();
    }
  })();
  const index = new Database(join(dataDir, 'agentpost.search.db'));
  index.prepare("INSERT INTO messages_fts (rowid, folder, subject, participants, body) VALUES (?, 'f1', 'lost', '', 'phantom')").run(last + 1);
  index.close();
  const second = await startApp(t, { dataDir });
  t.equal(indexOf(t, second.app).hits('phantom'), 0, 'the entry of the lost message is gone');
  const mailbox = (await second.app.services.mailbox.mailboxForAddress(agent.email))!;
  await second.app.store.groupCommit(() => second.app.services.mailbox.append(mailbox, 'INBOX', rawOf('new', 'x'), parsed('new', 'fresh words')));
  const principal = await second.app.services.auth.authenticate(agent.apiKey);
  const search = (words: string) => second.app.services.mailbox.list(principal, { folder: 'INBOX', limit: 5, offset: 0, search: words });
  t.same(
    (await search('fresh')).emails.map((email) => email.subject),
    ['new'],
    'the message that took its row id is found by its own words',
  );
  t.equal((await search('phantom')).totalMessages, 0);
});

t.test('a storing batch that rolls back keeps the text for its retry', async (t) => {
  const { app, register } = await startApp(t);
  const agent = await register();
  const mailbox = (await app.services.mailbox.mailboxForAddress(agent.email))!;
  // One turn: the message shares a transaction with a failing job; the batch rolls back and
  // each job runs again alone (src/store/group-commit.ts).
  const [stored, failed] = await Promise.allSettled([
    app.store.groupCommit(() => app.services.mailbox.append(mailbox, 'INBOX', rawOf('kept', 'x'), parsed('kept', 'rollback survivor'))),
    app.store.groupCommit(() => {
      throw new Error('another job fails');
    }),
  ]);
  t.same([stored.status, failed.status], ['fulfilled', 'rejected']);
  await app.services.searchIndex.catchUp();
  t.equal(await app.store.searchIndex.backfillCount(), 0, 'the retry still had the text');
  t.equal(indexOf(t, app).hits('survivor'), 1);
});

t.test('mail still queued when the process stopped is indexed from its raw bytes at the next start', async (t) => {
  const dataDir = t.testdir({});
  const raw = Buffer.from('From: a@example.org\r\nSubject: late\r\n\r\nunindexed pelican\r\n');
  // Stopped before the indexer's delay: the text existed only in that process.
  const agent = await storeOneAndStop(t, dataDir, raw, parsed('late', 'unindexed pelican'));
  const second = await startApp(t, { dataDir });
  t.equal(await second.app.services.searchIndex.backlog(), 0, 'indexed by the start, before it listens');
  const principal = await second.app.services.auth.authenticate(agent.apiKey);
  const found = await second.app.services.mailbox.list(principal, { folder: 'INBOX', limit: 5, offset: 0, search: 'pelican' });
  t.same(
    found.emails.map((email) => email.subject),
    ['late'],
  );
});

t.test('search words become FTS5 terms kept out of the folder column', async (t) => {
  t.equal(toFtsQuery('Invoice quart*'), '"Invoice" AND {subject participants body} : "quart"*', 'a whole word without a digit cannot be a folder token');
  t.equal(toFtsQuery('F12 q3²'), '{subject participants body} : "F12" AND {subject participants body} : "q3²"', 'a word with a digit could be');
  t.equal(toFtsQuery('invoice', { columns: 'body' }), 'body : "invoice"', 'IMAP BODY keeps its column');
  t.equal(toFtsQuery('東京 会議'), '{subject participants body} : "東京"* AND {subject participants body} : "会議"*', 'unspaced scripts match by prefix');
  t.equal(toFtsQuery('say "hi"', { columns: 'body', prefixAlways: true }), 'body : "say"* AND body : """hi"""*', 'IMAP BODY: quotes doubled, prefixes');
  t.equal(toFtsQuery('!!! *'), null, 'no letters or digits: no query');
});

t.test('the index holds the first MiB of a long text: a word near its start is found, one past it is not', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  const filler = 'lorem ipsum dolor sit amet\r\n'.repeat(45_000);
  const raw = Buffer.from(`From: a@example.org\r\nSubject: long\r\nContent-Type: text/plain\r\n\r\nalphaword\r\n${filler}omegaword\r\n`);
  await smtpSendRaw(app.smtpPort, 'a@example.org', [agent.email], raw);
  const found = async (word: string) => (await app.api('GET', `/api/v1/agent/inbox?search=${word}`, { key: agent.apiKey })).body.totalMessages;
  t.equal(await found('alphaword'), 1, 'a word in the first MiB');
  t.equal(await found('omegaword'), 0, 'a word past it');
  t.equal(await found('long'), 1, 'the subject is whole');
});

t.test('indexedText: a copy of the start, whole surrogate pairs', async (t) => {
  const short = 'short text';
  t.equal(indexedText(short), short, 'a short text as it is');
  const pairAtTheEdge = `${'x'.repeat(INDEXED_TEXT_MAX_CHARS - 1)}😀tail`;
  const cut = indexedText(pairAtTheEdge);
  t.equal(cut.length, INDEXED_TEXT_MAX_CHARS - 1, 'the pair that would be cut in two is left out');
  t.equal(indexedText(`${'y'.repeat(INDEXED_TEXT_MAX_CHARS)}z`).length, INDEXED_TEXT_MAX_CHARS);
});
