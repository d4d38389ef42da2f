// Threads over real SMTP conversations: replies from nodemailer with real headers, forwards,
// broken References, a parent arriving after its child, the subject-only fallback and its
// window, threads across folders, the list (newest activity first, cursor, search) and the
// thread (oldest first, with folder and uid), and threads given to mail stored before them.
import nodemailer from 'nodemailer';
import t, { type Test } from 'tap';
import { ManualClock } from '../src/core/clock.js';
import { startApp, type TestApp } from './helpers/app.js';
import { issueAccessKey } from './helpers/keys.js';

type Mail = {
  from?: string;
  subject: string;
  text?: string;
  messageId?: string;
  inReplyTo?: string;
  references?: string | string[];
  headers?: Record<string, string>;
};

const conversation = async (t: Test, options: { clock?: ManualClock } = {}) => {
  const app = await startApp(t, {}, { clock: options.clock });
  const agent = await app.register();
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: app.smtpPort, ignoreTLS: true });
  t.teardown(() => transport.close());
  let sent = 0;
  /** Sends one message over SMTP and answers its uid in INBOX and its threadId. */
  const send = async (mail: Mail): Promise<{ uid: string; threadId: string }> => {
    await transport.sendMail({ from: mail.from ?? 'alice@example.com', to: agent.email, text: mail.text ?? 'hello', ...mail });
    sent += 1;
    options.clock?.advance(60_000);
    const read = await app.api('GET', `/api/v1/agent/email/${sent}?markAsRead=false`, { key: agent.apiKey });
    return { uid: read.body.id, threadId: read.body.threadId };
  };
  return { app, agent, send };
};

t.test('replies, forwards and broken References join the thread their headers name', async (t) => {
  const { app, agent, send } = await conversation(t);
  const root = await send({ subject: 'Project plan', messageId: '<plan-1@example.com>' });
  const reply = await send({
    from: 'bob@example.org',
    subject: 'Re: Project plan',
    messageId: '<plan-2@example.org>',
    inReplyTo: '<plan-1@example.com>',
    references: '<plan-1@example.com>',
  });
  t.equal(reply.threadId, root.threadId, 'In-Reply-To and References name the root');
  const onlyReferences = await send({
    subject: 'Re: Project plan',
    messageId: '<plan-3@example.com>',
    references: ['<plan-1@example.com>', '<plan-2@example.org>'],
  });
  t.equal(onlyReferences.threadId, root.threadId, 'References alone');
  const forward = await send({ subject: 'Fwd: Project plan', messageId: '<fwd-1@example.com>', references: '<plan-3@example.com>' });
  t.equal(forward.threadId, root.threadId, 'a forward that names the forwarded message');
  const broken = await send({
    subject: 'Re: Project plan',
    messageId: '<plan-4@example.com>',
    headers: { References: 'plan-1@example.com <truncated@exam <plan-2@example.org> >>garbage<<' },
  });
  t.equal(broken.threadId, root.threadId, 'broken References: the well-formed id in it still counts');
  const unrelated = await send({ subject: 'Project plan', messageId: '<other-1@example.com>' });
  t.not(unrelated.threadId, root.threadId, 'the same subject without a reply prefix or headers is a new conversation');

  const list = await app.api('GET', '/api/v1/agent/threads', { key: agent.apiKey });
  t.equal(list.status, 200);
  t.same(
    list.body.threads.map((item: { id: string }) => item.id),
    [unrelated.threadId, root.threadId],
    'newest activity first',
  );
  t.match(list.body.threads[1], { subject: 'Project plan', messageCount: 5, unreadCount: 5 });
  const thread = await app.api('GET', `/api/v1/agent/threads/${root.threadId}`, { key: agent.apiKey });
  t.same(
    thread.body.messages.map((item: { id: string; folder: string }) => `${item.folder}/${item.id}`),
    ['INBOX/1', 'INBOX/2', 'INBOX/3', 'INBOX/4', 'INBOX/5'],
    'oldest first, with folder and uid',
  );
  t.ok(thread.body.messages.every((item: { uidValidity: string; threadId: string }) => item.uidValidity && item.threadId === root.threadId));
});

t.test('a child before its parent, and a message that bridges two threads merges them', async (t) => {
  const { app, agent, send } = await conversation(t);
  const child = await send({ subject: 'Re: Budget', messageId: '<budget-2@example.com>', inReplyTo: '<budget-1@example.com>' });
  const parent = await send({ subject: 'Budget', messageId: '<budget-1@example.com>' });
  t.equal(parent.threadId, child.threadId, 'the parent finds the thread that named it');
  const other = await send({ subject: 'Costs', messageId: '<costs-1@example.com>' });
  t.not(other.threadId, child.threadId);
  const bridge = await send({
    subject: 'Re: Budget and costs',
    messageId: '<bridge@example.com>',
    references: ['<budget-1@example.com>', '<costs-1@example.com>'],
  });
  t.equal(bridge.threadId, child.threadId, 'the bridge joins the older thread');
  const costs = await app.api('GET', '/api/v1/agent/email/3?markAsRead=false', { key: agent.apiKey });
  t.equal(costs.body.threadId, child.threadId, 'the other thread merged into it');
  const gone = await app.api('GET', `/api/v1/agent/threads/${other.threadId}`, { key: agent.apiKey });
  t.equal(gone.status, 404, 'the merged thread id is gone');
  const list = await app.api('GET', '/api/v1/agent/threads', { key: agent.apiKey });
  t.equal(list.body.threads.length, 1);
  t.equal(list.body.threads[0].messageCount, 4);
});

t.test('subject fallback: only a reply without headers, only within the window', async (t) => {
  const clock = new ManualClock('2026-03-01T09:00:00Z');
  const { send } = await conversation(t, { clock });
  const lunch = await send({ subject: 'Lunch on Friday?', messageId: '<lunch-1@example.com>' });
  const reply = await send({ from: 'bob@example.org', subject: 'RE: [team] Lunch   on friday?', messageId: '<lunch-2@example.org>' });
  t.equal(reply.threadId, lunch.threadId, 'prefix, list tag, case and spacing do not matter');
  const notAReply = await send({ subject: 'Lunch on Friday?', messageId: '<lunch-3@example.com>' });
  t.not(notAReply.threadId, lunch.threadId, 'no prefix: a new conversation');
  const withHeaders = await send({ subject: 'Re: Lunch on Friday?', messageId: '<lunch-4@example.com>', inReplyTo: '<unknown@example.com>' });
  t.not(withHeaders.threadId, lunch.threadId, 'headers that lead nowhere are not replaced by the subject');
  clock.advance(8 * 24 * 60 * 60 * 1000);
  const late = await send({ subject: 'Re: Lunch on Friday?', messageId: '<lunch-5@example.com>' });
  t.not(late.threadId, lunch.threadId, 'past threads.subjectWindowDays (7): a new conversation');
});

t.test('paging, search and access: cursor pages, search across folders, mail:read keys', async (t) => {
  const { app, agent, send } = await conversation(t);
  const ids: string[] = [];
  for (const topic of ['alpha', 'bravo', 'charlie'])
    ids.push((await send({ subject: topic, text: `about ${topic} quarterly`, messageId: `<${topic}@example.com>` })).threadId);
  const first = await app.api('GET', '/api/v1/agent/threads?limit=2', { key: agent.apiKey });
  t.same(
    first.body.threads.map((item: { id: string }) => item.id),
    [ids[2], ids[1]],
  );
  const second = await app.api('GET', `/api/v1/agent/threads?limit=2&before=${first.body.nextCursor}`, { key: agent.apiKey });
  t.same(
    second.body.threads.map((item: { id: string }) => item.id),
    [ids[0]],
  );
  t.equal(second.body.nextCursor, null);
  const found = await app.api('GET', '/api/v1/agent/threads?search=bravo', { key: agent.apiKey });
  t.same(
    found.body.threads.map((item: { id: string }) => item.id),
    [ids[1]],
  );
  const none = await app.api('GET', '/api/v1/agent/threads?search=zulu', { key: agent.apiKey });
  t.same(none.body, { threads: [], nextCursor: null });
  const bad = await app.api('GET', '/api/v1/agent/threads?before=yesterday', { key: agent.apiKey });
  t.equal(bad.status, 400);
  const reader = await issueAccessKey(app, agent.apiKey, { name: 'reader', kind: 'mail', permissions: ['mail:read'] });
  t.equal((await app.api('GET', `/api/v1/agent/threads/${ids[0]}`, { key: reader.apiKey })).status, 200);
  const sender = await issueAccessKey(app, agent.apiKey, {
    name: 'sender',
    kind: 'mail',
    permissions: ['mail:send'],
    dailyRecipientLimit: 1,
    totalRecipientLimit: 1,
  });
  t.equal((await app.api('GET', '/api/v1/agent/threads', { key: sender.apiKey })).status, 403, 'a send-only key reads no threads');
  const stranger = await app.register('stranger');
  t.equal((await app.api('GET', `/api/v1/agent/threads/${ids[0]}`, { key: stranger.apiKey })).status, 404, 'another mailbox’s thread is not found');
  const thread = await app.api('GET', `/api/v1/agent/threads/${ids[0]}?limit=1`, { key: agent.apiKey });
  t.equal(thread.body.messages.length, 1);
  t.equal(thread.body.nextCursor, null);
});

t.test('a message moved to another folder stays in its thread (IMAP MOVE and REST move copy the row)', async (t) => {
  const { app, agent, send } = await conversation(t);
  const root = await send({ subject: 'Invoice', messageId: '<inv-1@example.com>' });
  await send({ subject: 'Re: Invoice', messageId: '<inv-2@example.com>', inReplyTo: '<inv-1@example.com>' });
  const moved = await app.api('POST', '/api/v1/agent/email/1/move', { key: agent.apiKey, body: { to: 'Archive' } });
  t.equal(moved.status, 200);
  const thread = await app.api('GET', `/api/v1/agent/threads/${root.threadId}`, { key: agent.apiKey });
  t.same(
    thread.body.messages.map((item: { folder: string }) => item.folder).sort(),
    ['Archive', 'INBOX'],
    'the moved message is still in the thread, in its new folder',
  );
  const later = await send({ subject: 'Re: Invoice', messageId: '<inv-3@example.com>', references: ['<inv-1@example.com>'] });
  t.equal(later.threadId, root.threadId, 'a reply to the moved message still finds the thread');
});

t.test('threads turned off: stored without one, 503 on the thread reads; turned on, the next start threads that mail', async (t) => {
  const dataDir = t.testdir({});
  const app: TestApp = await startApp(t, { dataDir, threads: { enabled: false } });
  const agent = await app.register();
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: app.smtpPort, ignoreTLS: true });
  await transport.sendMail({ from: 'a@example.com', to: agent.email, subject: 'Old', text: 'x', messageId: '<old-1@example.com>' });
  await transport.sendMail({
    from: 'b@example.com',
    to: agent.email,
    subject: 'Re: Old',
    text: 'y',
    messageId: '<old-2@example.com>',
    inReplyTo: '<old-1@example.com>',
  });
  transport.close();
  t.equal((await app.api('GET', '/api/v1/agent/email/1', { key: agent.apiKey })).body.threadId, undefined, 'no thread');
  const off = await app.api('GET', '/api/v1/agent/threads', { key: agent.apiKey });
  t.match(off, { status: 503, body: { code: 'unavailable' } });
  await app.app.stop();
  const again = await startApp(t, { dataDir });
  const [one, two] = await Promise.all([1, 2].map((uid) => again.api('GET', `/api/v1/agent/email/${uid}?markAsRead=false`, { key: agent.apiKey })));
  t.ok(one.body.threadId, 'threaded at start');
  t.equal(two.body.threadId, one.body.threadId, 'by the headers it has');
  t.equal((await again.api('GET', '/api/v1/agent/threads', { key: agent.apiKey })).body.threads.length, 1);
});
