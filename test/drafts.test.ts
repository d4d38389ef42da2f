// Drafts: written by a mail:draft key (or the full key) with the send request's validation,
// kept in a Drafts folder visible over IMAP, approved by the owner through the one send
// service (credits, limits, the draft id as idempotency key), rejected, and refused to every
// other key kind and to other owners.
import t from 'tap';
import { funded } from './helpers/agents.js';
import { startApp, type TestApp } from './helpers/app.js';
import { imapLogin, rawImap } from './helpers/imap.js';
import { issueAccessKey } from './helpers/keys.js';
import { callTool, mcpClient } from './helpers/mcp.js';
import { signedInConsole } from './helpers/console.js';
import { makeOwner, type TestOwner } from './helpers/owners.js';

const DRAFT_KEY = { name: 'drafter', kind: 'mail', permissions: ['mail:draft'] };

/** An owner, its funded agent, and a draft key the owner issued for it. */
const setup = async (app: TestApp, credits = 10): Promise<{ owner: TestOwner; agent: Awaited<ReturnType<typeof funded>>; draftKey: string }> => {
  const owner = await makeOwner(app);
  const agent = await funded(app, credits);
  await app.api('POST', '/api/user/agents/claim', { key: owner.token, body: { apiKey: agent.apiKey } });
  const issued = await app.api('POST', `/api/user/agents/${agent.userId}/access-keys`, { key: owner.token, body: DRAFT_KEY });
  return { owner, agent, draftKey: issued.body.apiKey };
};

/** Approves the draft as its owner read it: its current version, from the owner's read. */
const approve = async (app: TestApp, owner: TestOwner, id: string) => {
  const read = await app.api('GET', `/api/user/drafts/${id}`, { key: owner.token });
  return app.api('POST', `/api/user/drafts/${id}/approve`, { key: owner.token, body: { version: read.body.version } });
};

t.test('who may use the draft endpoints: mail:draft and full keys; every other key kind and owner JWTs are refused', async (t) => {
  const app = await startApp(t);
  const { owner, agent, draftKey } = await setup(app);
  const reader = await issueAccessKey(app, agent.apiKey, { name: 'r', kind: 'mail', permissions: ['mail:read'] });
  const sender = await issueAccessKey(app, agent.apiKey, {
    name: 's',
    kind: 'mail',
    permissions: ['mail:send'],
    dailyRecipientLimit: 5,
    totalRecipientLimit: 5,
  });
  const both = await issueAccessKey(app, agent.apiKey, {
    name: 'rs',
    kind: 'mail',
    permissions: ['mail:read', 'mail:send'],
    dailyRecipientLimit: 5,
    totalRecipientLimit: 5,
  });
  const domain = await issueAccessKey(app, agent.apiKey, { name: 'd', kind: 'domain', permissions: ['domains:read', 'domains:write'] });
  const message = { to: 'someone@example.com', subject: 'for approval', text: 'hello' };
  const byDraftKey = await app.api('POST', '/api/v1/agent/drafts', { key: draftKey, body: message });
  t.equal(byDraftKey.status, 200);
  t.match(byDraftKey.body, { status: 'pending', subject: 'for approval', recipientCount: 1, decision: null, outboundId: null, draftsUid: '1', message });
  const byFullKey = await app.api('POST', '/api/v1/agent/drafts', { key: agent.apiKey, body: message });
  t.equal(byFullKey.status, 200, 'a full key may also create drafts');
  for (const [name, key, status] of [
    ['mail:read', reader.apiKey, 403],
    ['mail:send', sender.apiKey, 403],
    ['mail:read+mail:send', both.apiKey, 403],
    ['domain', domain.apiKey, 403],
    ['owner JWT', owner.token, 403],
    ['no key', undefined, 401],
    ['unknown key', `svc_access_${'f'.repeat(64)}`, 401],
  ] as [string, string | undefined, number][]) {
    for (const [method, path, body] of [
      ['POST', '/api/v1/agent/drafts', message],
      ['GET', '/api/v1/agent/drafts'],
      ['GET', `/api/v1/agent/drafts/${byDraftKey.body.id}`],
      ['PATCH', `/api/v1/agent/drafts/${byDraftKey.body.id}`, { subject: 'x' }],
      ['DELETE', `/api/v1/agent/drafts/${byDraftKey.body.id}`],
    ] as [string, string, unknown?][]) {
      t.equal((await app.api(method, path, { key, body })).status, status, `${name}: ${method} ${path}`);
    }
  }
  t.equal((await app.api('GET', `/api/v1/agent/drafts/${byDraftKey.body.id}`, { key: draftKey })).body.status, 'pending', 'nothing changed');
  const mcp = await mcpClient(t, app.baseUrl, { key: draftKey });
  for (const tool of ['check_balance', 'check_inbox']) {
    const refused = await callTool(mcp, tool);
    t.equal(refused.isError, true, `MCP ${tool} refuses a draft key`);
  }
});

t.test('the send request validation applies; a draft key sees only its own drafts; merge-patch and delete while pending', async (t) => {
  const app = await startApp(t);
  const { owner, agent, draftKey } = await setup(app);
  const other = (await app.api('POST', `/api/user/agents/${agent.userId}/access-keys`, { key: owner.token, body: { ...DRAFT_KEY, name: 'other' } })).body
    .apiKey;
  t.equal((await app.api('POST', '/api/v1/agent/drafts', { key: draftKey, body: { to: 'not an address', subject: 's', text: 't' } })).status, 400);
  t.equal((await app.api('POST', '/api/v1/agent/drafts', { key: draftKey, body: { to: 'a@example.com', subject: 's' } })).status, 400, 'a body is needed');
  t.equal(
    (await app.api('POST', '/api/v1/agent/drafts', { key: draftKey, body: { to: 'a@example.com', subject: 's', text: 't', from: 'ceo@example.com' } })).status,
    403,
    'from is the account',
  );
  t.equal(
    (await app.api('POST', '/api/v1/agent/drafts', { key: draftKey, body: { to: 'a@example.com', subject: 's', text: 't', idempotencyKey: 'k' } })).status,
    400,
  );
  t.equal(
    (await app.api('POST', '/api/v1/agent/drafts', { key: draftKey, body: { to: 'a@example.com', subject: 's', text: 'x'.repeat(1024 * 1024 + 1) } })).status,
    413,
  );

  const mine = (
    await app.api('POST', '/api/v1/agent/drafts', { key: draftKey, body: { to: 'a@example.com', cc: 'c@example.com', subject: 'mine', text: 'one' } })
  ).body;
  const theirs = (await app.api('POST', '/api/v1/agent/drafts', { key: other, body: { to: 'b@example.com', subject: 'theirs', text: 'two' } })).body;
  t.same(
    (await app.api('GET', '/api/v1/agent/drafts', { key: draftKey })).body.drafts.map((d: { id: string }) => d.id),
    [mine.id],
  );
  t.same(
    (await app.api('GET', '/api/v1/agent/drafts', { key: agent.apiKey })).body.drafts.map((d: { id: string }) => d.id),
    [theirs.id, mine.id],
    'the full key sees all',
  );
  t.equal((await app.api('GET', `/api/v1/agent/drafts/${theirs.id}`, { key: draftKey })).status, 404);
  t.equal((await app.api('DELETE', `/api/v1/agent/drafts/${theirs.id}`, { key: draftKey })).status, 404);

  const patched = await app.api('PATCH', `/api/v1/agent/drafts/${mine.id}`, { key: draftKey, body: { subject: 'mine, better', cc: null } });
  t.equal(patched.status, 200);
  t.same(patched.body.message, { to: 'a@example.com', subject: 'mine, better', text: 'one' });
  t.equal(patched.body.recipientCount, 1);
  t.equal(
    (await app.api('PATCH', `/api/v1/agent/drafts/${mine.id}`, { key: draftKey, body: { to: null } })).status,
    400,
    'the result must be a valid send request',
  );
  t.equal((await app.api('PATCH', `/api/v1/agent/drafts/${mine.id}`, { key: draftKey, body: { idempotencyKey: 'k' } })).status, 400);
  t.equal((await app.api('DELETE', `/api/v1/agent/drafts/${theirs.id}`, { key: other })).status, 200);
  t.equal((await app.api('GET', `/api/v1/agent/drafts/${theirs.id}`, { key: other })).status, 404);

  t.equal((await app.api('POST', `/api/user/drafts/${mine.id}/reject`, { key: owner.token, body: { reason: 'not now' } })).status, 200);
  const decided = await app.api('GET', `/api/v1/agent/drafts/${mine.id}`, { key: draftKey });
  t.match(decided.body, {
    status: 'rejected',
    decision: { outcome: 'rejected', by: { id: owner.id, email: owner.email }, reason: 'not now' },
    draftsUid: null,
  });
  t.equal((await app.api('PATCH', `/api/v1/agent/drafts/${mine.id}`, { key: draftKey, body: { subject: 'again' } })).status, 409);
  t.equal((await app.api('DELETE', `/api/v1/agent/drafts/${mine.id}`, { key: draftKey })).status, 409);
  t.equal((await approve(app, owner, mine.id)).status, 409);
});

t.test('approval sends through the send service as the agent, records the approver, and is idempotent by draft id', async (t) => {
  const app = await startApp(t);
  const { owner, agent, draftKey } = await setup(app, 1);
  const friend = await app.register('friend');
  const draft = (await app.api('POST', '/api/v1/agent/drafts', { key: draftKey, body: { to: friend.email, subject: 'approved mail', text: 'from a draft' } }))
    .body;
  const listed = await app.api('GET', '/api/user/drafts', { key: owner.token });
  t.match(listed.body.drafts, [{ id: draft.id, status: 'pending', agent: { id: agent.userId, email: agent.email } }]);
  const approved = await approve(app, owner, draft.id);
  t.equal(approved.status, 200);
  t.match(approved.body, { draft: { status: 'sent', decision: { outcome: 'approved', by: { id: owner.id } }, draftsUid: null }, send: { status: 'accepted' } });
  t.equal(approved.body.draft.outboundId, approved.body.send.id);
  const received = await app.api('GET', '/api/v1/agent/inbox', { key: friend.apiKey });
  t.match(received.body.emails, [{ subject: 'approved mail', from: { email: agent.email } }], 'delivered to the local recipient');
  t.equal((await app.api('GET', '/api/v1/agent/balance', { key: agent.apiKey })).body.credits, 0, "the agent's credit paid for it");
  t.match((await app.api('GET', `/api/v1/agent/outbound/${approved.body.send.id}`, { key: agent.apiKey })).body.recipients, [
    { email: friend.email, status: 'delivered' },
  ]);
  t.equal((await approve(app, owner, draft.id)).status, 409, 'sent once');

  // No credit left: the refusal is the answer and the draft waits again.
  const poor = (await app.api('POST', '/api/v1/agent/drafts', { key: draftKey, body: { to: friend.email, subject: 'later', text: 'x' } })).body;
  const refused = await approve(app, owner, poor.id);
  t.equal(refused.status, 402);
  t.match((await app.api('GET', `/api/v1/agent/drafts/${poor.id}`, { key: draftKey })).body, { status: 'pending', decision: null });

  // An approval cut off after the send committed: approving again finds the send by the draft id and sends nothing more.
  await app.app.services.accounts.addCredits(agent.email, 1);
  const principal = await app.app.services.ownership.principalFor({ ownerId: owner.id, sessionId: 'crashed' }, agent.userId);
  const first = await app.app.services.sending.send(
    principal,
    { to: friend.email, subject: 'later', text: 'x' },
    { idempotencyKey: `draft:${poor.id}`, via: 'rest' },
  );
  await app.app.store.transaction(() =>
    app.app.store.drafts.transition(poor.id, ['pending'], 'approving', { decidedBy: owner.id, decidedAt: 0, updatedAt: 0 }),
  );
  const resumed = await approve(app, owner, poor.id);
  t.equal(resumed.status, 200);
  t.match(resumed.body.send, { id: first.id, replayed: true });
  t.equal((await app.api('GET', '/api/v1/agent/inbox', { key: friend.apiKey })).body.totalMessages, 2, 'delivered once');
  t.equal((await app.api('GET', '/api/v1/agent/balance', { key: agent.apiKey })).body.credits, 0, 'charged once');
});

t.test('approval names the version the owner read: a draft changed since answers 409 and is not sent', async (t) => {
  const app = await startApp(t);
  const { owner, agent, draftKey } = await setup(app);
  const friend = await app.register('friend');
  const stranger = await app.register('stranger');
  const created = await app.api('POST', '/api/v1/agent/drafts', { key: draftKey, body: { to: friend.email, subject: 'as reviewed', text: 'harmless' } });
  const read = await app.api('GET', `/api/user/drafts/${created.body.id}`, { key: owner.token });
  t.match(read.body.version, /^[0-9a-f]{32}$/);
  t.equal(read.body.version, created.body.version, 'the agent and the owner see the same version');

  // The agent changes the draft after the owner read it.
  const changed = await app.api('PATCH', `/api/v1/agent/drafts/${created.body.id}`, {
    key: draftKey,
    body: { to: stranger.email, subject: 'not as reviewed', text: 'something else' },
  });
  t.not(changed.body.version, read.body.version, 'a change makes a new version');
  const stale = await app.api('POST', `/api/user/drafts/${created.body.id}/approve`, { key: owner.token, body: { version: read.body.version } });
  t.equal(stale.status, 409);
  t.match(stale.body, { code: 'conflict', error: /changed since the version you read/ });
  t.match((await app.api('GET', `/api/v1/agent/drafts/${created.body.id}`, { key: draftKey })).body, { status: 'pending', decision: null });
  t.equal((await app.api('GET', '/api/v1/agent/outbound', { key: agent.apiKey })).body.submissions.length, 0, 'nothing sent');
  t.equal((await app.api('GET', '/api/v1/agent/inbox', { key: stranger.apiKey })).body.totalMessages, 0);

  const missing = await app.api('POST', `/api/user/drafts/${created.body.id}/approve`, { key: owner.token, body: {} });
  t.equal(missing.status, 400, 'an approval must name a version');
  t.equal(missing.body.code, 'invalid_input');

  const current = await app.api('POST', `/api/user/drafts/${created.body.id}/approve`, { key: owner.token, body: { version: changed.body.version } });
  t.equal(current.status, 200, 'the version read again is approved');
  t.equal((await app.api('GET', '/api/v1/agent/inbox', { key: stranger.apiKey })).body.emails[0].subject, 'not as reviewed');
  t.equal((await app.api('GET', '/api/v1/agent/inbox', { key: friend.apiKey })).body.totalMessages, 0);
});

t.test('the console approves the version its page showed: a draft changed since is shown again, not sent', async (t) => {
  const app = await startApp(t);
  const { owner, agent, draftKey } = await setup(app);
  const created = await app.api('POST', '/api/v1/agent/drafts', { key: draftKey, body: { to: 'a@example.com', subject: 'first text', text: 'x' } });
  const browser = await signedInConsole(app.baseUrl, owner);
  const shown = await browser.get(`/drafts/${created.body.id}`);
  t.match(shown.text, `name="version" value="${created.body.version}"`, 'the approve form carries the version shown');

  await app.api('PATCH', `/api/v1/agent/drafts/${created.body.id}`, { key: draftKey, body: { subject: 'second text' } });
  const stale = await browser.post(`/drafts/${created.body.id}/approve`, { version: created.body.version });
  t.equal(stale.status, 409);
  t.match(stale.text, /Not sent: this draft changed since the version you read/);
  t.match(stale.text, /second text/, 'the page shows the draft as it is now');
  t.equal((await app.api('GET', '/api/v1/agent/outbound', { key: agent.apiKey })).body.submissions.length, 0, 'nothing sent');

  const version = /name="version" value="([0-9a-f]{32})"/.exec(stale.text)?.[1] ?? '';
  const approved = await browser.post(`/drafts/${created.body.id}/approve`, { version });
  t.equal(approved.status, 303, 'the version shown now is sent');
  t.match((await app.api('GET', '/api/v1/agent/outbound', { key: agent.apiKey })).body.submissions, [{ subject: 'second text' }]);
});

t.test('another owner reaches none of the drafts', async (t) => {
  const app = await startApp(t);
  const { draftKey } = await setup(app);
  const eve = await makeOwner(app);
  const draft = (await app.api('POST', '/api/v1/agent/drafts', { key: draftKey, body: { to: 'a@example.com', subject: 's', text: 't' } })).body;
  t.same((await app.api('GET', '/api/user/drafts?status=all', { key: eve.token })).body.drafts, []);
  t.equal((await app.api('GET', `/api/user/drafts/${draft.id}`, { key: eve.token })).status, 404);
  t.equal((await app.api('POST', `/api/user/drafts/${draft.id}/approve`, { key: eve.token, body: { version: draft.version } })).status, 404);
  t.equal((await app.api('POST', `/api/user/drafts/${draft.id}/reject`, { key: eve.token, body: {} })).status, 404);
  t.equal((await app.api('GET', `/api/v1/agent/drafts/${draft.id}`, { key: draftKey })).body.status, 'pending');
});

t.test('the Drafts folder over IMAP: copies appear, change and go; a selected session hears EXPUNGE', async (t) => {
  const app = await startApp(t);
  const { owner, agent, draftKey } = await setup(app);
  const draft = (
    await app.api('POST', '/api/v1/agent/drafts', {
      key: draftKey,
      body: { to: 'a@example.com', bcc: 'b@example.com', subject: 'first words', text: 'a draft body' },
    })
  ).body;
  const client = await imapLogin(t, app.imapPort, agent.email, agent.apiKey);
  const folders = (await client.list()).map((folder) => folder.path);
  t.ok(folders.includes('Drafts'), 'Drafts is listed');
  const lock = await client.getMailboxLock('Drafts');
  const copies = [];
  for await (const message of client.fetch('1:*', { envelope: true, source: true, uid: true })) copies.push(message);
  lock.release();
  t.equal(copies.length, 1);
  t.equal(copies[0].envelope?.subject, 'first words');
  t.match(copies[0].source?.toString(), /^Bcc: b@example\.com/m, 'the copy keeps Bcc, as a mail client keeps a draft');

  const raw = await rawImap(t, app.imapPort);
  raw.send(`a1 LOGIN ${agent.email} ${agent.apiKey}\r\n`);
  await raw.read(/^a1 OK/m);
  raw.send('a2 SELECT Drafts\r\n');
  t.match(await raw.read(/^a2 OK/m), /\* 1 EXISTS/);
  await app.api('PATCH', `/api/v1/agent/drafts/${draft.id}`, { key: draftKey, body: { subject: 'second words' } });
  raw.send('a3 FETCH 1 (UID)\r\n');
  const fetched = await raw.read(/^a3 OK/m);
  t.notMatch(fetched, /EXPUNGE/, 'no EXPUNGE while answering FETCH (RFC 3501 7.4.1)');
  t.match(fetched, /\* 2 EXISTS/, 'the new copy is announced');
  raw.send('a4 NOOP\r\n');
  t.match(await raw.read(/^a4 OK/m), /^\* 1 EXPUNGE\r\na4 OK/m, 'the old copy is expunged at the next command that may');
  t.same(
    (await app.api('GET', '/api/v1/agent/inbox?folder=Drafts&search=first', { key: agent.apiKey })).body.totalMessages,
    0,
    'the old copy is out of the index',
  );
  t.equal((await app.api('GET', '/api/v1/agent/inbox?folder=Drafts&search=second', { key: agent.apiKey })).body.totalMessages, 1);

  raw.send('a5 IDLE\r\n');
  await raw.read(/^\+ /m);
  await approve(app, owner, draft.id);
  t.match(await raw.read(/\* 1 EXPUNGE/), /\* 1 EXPUNGE/, 'pushed to an idling client when the approval sent it');
  raw.send('DONE\r\n');
  await raw.read(/^a5 OK/m);
  t.equal((await app.api('GET', '/api/v1/agent/inbox?folder=Drafts', { key: agent.apiKey })).body.totalMessages, 0);
  t.equal(
    (await app.api('GET', '/api/v1/agent/inbox?folder=Sent', { key: agent.apiKey })).body.emails[0].subject,
    'second words',
    "the Sent copy is the send's",
  );
});

t.test("a Drafts folder deleted and made again: a draft never removes the new folder's message with its old UID (RFC 3501 2.3.1.1)", async (t) => {
  const app = await startApp(t);
  const { agent, draftKey } = await setup(app);
  const draft = (await app.api('POST', '/api/v1/agent/drafts', { key: draftKey, body: { to: 'a@example.com', subject: 'kept', text: 'x' } })).body;
  t.equal(draft.draftsUid, '1');
  const raw = await rawImap(t, app.imapPort);
  raw.send(`a1 LOGIN ${agent.email} ${agent.apiKey}\r\na2 DELETE Drafts\r\n`);
  t.match(await raw.read(/^a2 /m), /^a2 OK/m);
  const mine = 'From: me@example.org\r\nSubject: a client draft\r\n\r\nmine\r\n';
  raw.send(`a3 APPEND Drafts {${mine.length}+}\r\n${mine}\r\n`);
  t.match(await raw.read(/^a3 /m), /^a3 OK \[APPENDUID \d+ 1\]/m, 'the new Drafts numbers from 1 again');
  t.equal((await app.api('PATCH', `/api/v1/agent/drafts/${draft.id}`, { key: draftKey, body: { subject: 'kept, changed' } })).status, 200);
  const drafts = await app.api('GET', '/api/v1/agent/inbox?folder=Drafts', { key: agent.apiKey });
  t.same(
    drafts.body.emails.map((email: { subject: string }) => email.subject).sort(),
    ['a client draft', 'kept, changed'],
    "the client's message is still there",
  );
  t.equal((await app.api('DELETE', `/api/v1/agent/drafts/${draft.id}`, { key: draftKey })).status, 200);
  t.same(
    (await app.api('GET', '/api/v1/agent/inbox?folder=Drafts', { key: agent.apiKey })).body.emails.map((email: { subject: string }) => email.subject),
    ['a client draft'],
    'deleting the draft removes its own copy, and only that',
  );
});
