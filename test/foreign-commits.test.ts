// What another process commits to the same data folder reaches this one's watchers by a look at
// the database (docs/design.md, "Several processes: wake-ups and exactness"). A second Store
// on the app's file is a second connection, which SQLite's data_version tells apart exactly as
// it tells another process.
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { MailboxChangeScan } from '../src/services/mail/foreign-changes.js';
import { type MailboxChange, MailboxWatchers } from '../src/services/mail/watchers.js';
import { Store } from '../src/store/index.js';
import { startApp, type TestApp } from './helpers/app.js';
import { deliverDirect, simpleMessage } from './helpers/mail.js';
import { callTool, mcpClient } from './helpers/mcp.js';

const otherConnection = (t: Test, app: TestApp): Store => {
  const store = Store.open(join(app.app.config.dataDir, 'agentpost.db'));
  t.teardown(() => store.close());
  return store;
};

const mailboxIdOf = async (app: TestApp, accountId: string): Promise<string> => {
  const mailbox = await app.app.store.accounts.mailboxOfAccount(accountId);
  if (!mailbox) throw new Error('no mailbox');
  return mailbox.id;
};

t.test("another connection's commit is seen once; one's own never", async (t) => {
  const app = await startApp(t);
  const other = otherConnection(t, app);
  t.equal(other.committedElsewhere(), false, 'nothing since it opened');
  await app.register();
  t.equal(other.committedElsewhere(), true, 'the registration committed elsewhere');
  t.equal(other.committedElsewhere(), false, 'told once');
  await other.transaction(() => other.rateLimits.record('test', 'own', Date.now()));
  t.equal(other.committedElsewhere(), false, 'its own commit is not a foreign one');
});

t.test('the scan tells watchers of stored mail and flag changes committed elsewhere, and of nothing else', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  const other = otherConnection(t, app);
  const watchers = new MailboxWatchers();
  const scan = new MailboxChangeScan(other, watchers);
  const look = async (): Promise<void> => {
    await scan.measureNewWatches();
    if (other.committedElsewhere()) await scan.tellChanges();
  };
  const heard: MailboxChange[] = [];
  watchers.watch(await mailboxIdOf(app, agent.userId), (change) => heard.push(change));
  await look();
  t.same(heard, [], 'a new watch is measured, nothing told');

  await deliverDirect(app.app, [agent.email], simpleMessage({ subject: 'elsewhere', to: agent.email }));
  await look();
  t.same(heard.splice(0), [{ kind: 'stored', folder: 'INBOX' }], 'mail stored elsewhere');

  const inbox = await app.app.store.folders.byName(await mailboxIdOf(app, agent.userId), 'INBOX');
  await app.app.store.transaction(() => app.app.store.folders.nextModseq(inbox?.id ?? 0));
  await look();
  t.same(heard.splice(0), [{ kind: 'flags', folder: 'INBOX' }], 'a new mod-sequence: flags or an expunge');

  await app.app.store.transaction(() => app.app.store.rateLimits.record('test', 'elsewhere', Date.now()));
  await look();
  t.same(heard, [], 'a commit that changed no watched folder tells nobody');
});

t.test('a mailbox first watched in a look that sees a foreign commit: its watchers are told to read again', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  const other = otherConnection(t, app);
  const watchers = new MailboxWatchers();
  const scan = new MailboxChangeScan(other, watchers);
  const heard: MailboxChange[] = [];
  watchers.watch(await mailboxIdOf(app, agent.userId), (change) => heard.push(change));
  // The mail commits after the watch began and before the look measures the mailbox.
  await deliverDirect(app.app, [agent.email], simpleMessage({ subject: 'between', to: agent.email }));
  await scan.measureNewWatches();
  t.ok(other.committedElsewhere());
  await scan.tellChanges();
  t.ok(
    heard.some((change) => change.kind === 'stored' && change.folder === 'INBOX'),
    'told that INBOX may have new mail',
  );
});

t.test('wait_for_email goes on after a wake-up that finds nothing new', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  const client = await mcpClient(t, app.baseUrl, { key: agent.apiKey });
  const waiting = callTool(client, 'wait_for_email', { afterUid: '0', timeoutSeconds: 20 });
  await new Promise((resolve) => setTimeout(resolve, 200));
  app.app.services.mailboxWatchers.tell(await mailboxIdOf(app, agent.userId), { kind: 'stored', folder: 'INBOX' });
  await new Promise((resolve) => setTimeout(resolve, 200));
  await deliverDirect(app.app, [agent.email], simpleMessage({ subject: 'after the empty wake-up', to: agent.email }));
  const outcome = await waiting;
  t.equal(outcome.body.timedOut, false);
  t.same(
    outcome.body.emails.map((email: { subject: string }) => email.subject),
    ['after the empty wake-up'],
  );
});

t.test("another app's commit on the same data folder kicks this one's delivery queue within a second or so", async (t) => {
  const first = await startApp(t);
  const second = await startApp(t, { dataDir: first.app.config.dataDir });
  const queue = second.app.queues.delivery;
  let kicks = 0;
  const kick = queue.kick.bind(queue);
  queue.kick = () => {
    kicks += 1;
    kick();
  };
  await new Promise((resolve) => setTimeout(resolve, 1_200));
  kicks = 0;
  await first.register();
  const started = Date.now();
  while (kicks === 0 && Date.now() - started < 5_000) await new Promise((resolve) => setTimeout(resolve, 20));
  t.ok(kicks > 0, `kicked ${Date.now() - started} ms after the commit elsewhere`);
});

t.test('a process alone never sees a foreign commit: mail, a wait and a send cost it one PRAGMA a tick', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  const streams = app.app.services.eventStreams;
  let looks = 0;
  const tell = streams.tellLoggedElsewhere.bind(streams);
  streams.tellLoggedElsewhere = async () => {
    looks += 1;
    await tell();
  };
  const client = await mcpClient(t, app.baseUrl, { key: agent.apiKey });
  const waiting = callTool(client, 'wait_for_email', { afterUid: '0', timeoutSeconds: 20 });
  for (let index = 0; index < 10; index += 1) {
    await deliverDirect(app.app, [agent.email], simpleMessage({ subject: `alone ${index}`, to: agent.email }));
  }
  await app.app.services.accounts.addCredits(agent.email, 5);
  await app.api('POST', '/api/v1/agent/send', { key: agent.apiKey, body: { to: agent.email, subject: 'to myself', text: 'x' } });
  await waiting;
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.equal(looks, 0, 'no look at the database beyond the PRAGMA');
});
