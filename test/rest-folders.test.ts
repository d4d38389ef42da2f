// REST for agents: the folder list with counts, moving a message, deleting it (to Trash,
// then for good); what IMAP and webhooks make of those. Every response is checked against
// the OpenAPI document by the helper.
import t from 'tap';
import { startApp } from './helpers/app.js';
import { imapLogin } from './helpers/imap.js';
import { issueAccessKey } from './helpers/keys.js';
import { deliverDirect, simpleMessage } from './helpers/mail.js';
import { webhookFixture } from './helpers/webhooks.js';

t.test('GET folders: counts, uidValidity, uidNext, special use, subscribed; a limited mail:read key may list', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  for (const subject of ['a', 'b']) await deliverDirect(app.app, [agent.email], simpleMessage({ subject, to: agent.email }));
  await app.api('GET', '/api/v1/agent/email/1', { key: agent.apiKey });
  const listed = await app.api('GET', '/api/v1/agent/folders', { key: agent.apiKey });
  t.equal(listed.status, 200);
  const inbox = await app.api('GET', '/api/v1/agent/inbox', { key: agent.apiKey });
  t.same(listed.body.folders, [
    { name: 'INBOX', specialUse: null, messages: 2, unread: 1, uidValidity: inbox.body.uidValidity, uidNext: 3, subscribed: true },
    { name: 'Sent', specialUse: 'sent', messages: 0, unread: 0, uidValidity: listed.body.folders[1].uidValidity, uidNext: 1, subscribed: true },
  ]);
  const reader = await issueAccessKey(app, agent.apiKey, { name: 'reader', kind: 'mail', permissions: ['mail:read'] });
  t.equal((await app.api('GET', '/api/v1/agent/folders', { key: reader.apiKey })).status, 200);
  t.equal((await app.api('POST', '/api/v1/agent/email/1/move', { key: reader.apiKey, body: { to: 'Archive' } })).status, 403, 'moving needs the full key');
  t.equal((await app.api('DELETE', '/api/v1/agent/email/1', { key: reader.apiKey })).status, 403);
  t.equal((await app.api('GET', '/api/v1/agent/folders')).status, 401);
});

t.test('move: a new id in the target, 404 in the old folder, 409 on a stale uidValidity, 404 for a missing target, 400 for the same folder', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  const key = agent.apiKey;
  await deliverDirect(app.app, [agent.email], simpleMessage({ subject: 'file me', to: agent.email }));
  const before = await app.api('GET', '/api/v1/agent/inbox', { key });
  const moved = await app.api('POST', '/api/v1/agent/email/1/move', { key, body: { to: 'Archive', uidValidity: before.body.uidValidity } });
  t.equal(moved.status, 200);
  t.match(moved.body, { id: '1', folder: 'Archive', from: { id: '1', folder: 'INBOX' } });
  t.equal((await app.api('GET', '/api/v1/agent/email/1', { key })).status, 404, 'the contract: 404 in the old folder');
  const read = await app.api('GET', `/api/v1/agent/email/${moved.body.id}?folder=Archive&uidValidity=${moved.body.uidValidity}`, { key });
  t.equal(read.body.subject, 'file me');
  t.equal((await app.api('POST', '/api/v1/agent/email/1/move', { key, body: { folder: 'Archive', to: 'Nowhere' } })).status, 404);
  t.equal((await app.api('POST', '/api/v1/agent/email/1/move', { key, body: { folder: 'Archive', to: 'Archive' } })).status, 400);
  t.equal((await app.api('POST', '/api/v1/agent/email/1/move', { key, body: { folder: 'Archive', to: 'INBOX', uidValidity: '1' } })).status, 409);
  t.equal((await app.api('POST', '/api/v1/agent/email/9/move', { key, body: { folder: 'Archive', to: 'INBOX' } })).status, 404);
  t.equal((await app.api('POST', '/api/v1/agent/email/1/move', { key, body: { to: 'INBOX', extra: 1 } })).status, 400);
  const back = await app.api('POST', '/api/v1/agent/email/1/move', { key, body: { folder: 'Archive', to: 'inbox' } });
  t.match(back.body, { id: '2', folder: 'INBOX' }, 'UIDs are never reused: it comes back as 2');
});

t.test('delete: to Trash, then for good from Trash; IMAP sees both', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  const key = agent.apiKey;
  await deliverDirect(app.app, [agent.email], simpleMessage({ subject: 'bin me', to: agent.email }));
  const first = await app.api('DELETE', '/api/v1/agent/email/1', { key });
  t.match(first.body, { deleted: true, expunged: false, folder: 'Trash', id: '1' });
  const client = await imapLogin(t, app.imapPort, agent.email, key);
  t.match(await client.status('Trash', { messages: true }), { messages: 1 });
  t.match(await client.status('INBOX', { messages: true }), { messages: 0 });
  const second = await app.api('DELETE', `/api/v1/agent/email/${first.body.id}?folder=Trash`, { key });
  t.same(second.body, { deleted: true, expunged: true, folder: 'Trash' });
  t.match(await client.status('Trash', { messages: true }), { messages: 0 });
  t.equal((await app.api('DELETE', `/api/v1/agent/email/${first.body.id}?folder=Trash`, { key })).status, 404);
});

t.test('webhooks: moving and deleting keep a verified endpoint verified (INBOX keeps its uidValidity); a copy into INBOX is an event', async (t) => {
  const f = await webhookFixture(t);
  const key = f.agent.apiKey;
  await f.mail('first');
  await f.receiver.waitFor('message.received');
  const moved = await f.api('POST', '/api/v1/agent/email/1/move', { key, body: { to: 'Archive' } });
  await f.api('DELETE', '/api/v1/agent/email/1?folder=Archive', { key });
  t.equal(moved.status, 200);
  const client = await imapLogin(t, f.imapPort, f.agent.email, key);
  await client.mailboxOpen('Trash');
  await client.messageCopy('1', 'INBOX', { uid: true });
  const events = await f.receiver.waitFor('message.received', 2);
  t.equal(events[1].event.data.uid, '2', 'the copy (the contract: a copied message can produce an event)');
  await f.runOnce();
  t.equal((await f.api('GET', '/api/v1/agent/webhooks', { key })).body.webhooks[0].status, 'verified');
  await client.mailboxOpen('INBOX');
  await t.rejects(client.mailboxRename('INBOX', 'INBOX'), 'INBOX cannot take its own name');
  await client.mailboxRename('INBOX', 'Old inbox');
  t.match(await client.status('Old inbox', { messages: true }), { messages: 1 }, 'RENAME INBOX moves its mail (RFC 3501 section 6.3.5)');
  await f.runOnce();
  t.equal((await f.api('GET', '/api/v1/agent/webhooks', { key })).body.webhooks[0].status, 'verified', 'INBOX itself stays, with its uidValidity');
});
