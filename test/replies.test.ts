// Replies over REST and MCP: recipients, subject and thread headers filled from the original
// (checked at a sink, as the remote server received them), the Sent copy in the original's
// thread, quoting only when asked, and the send path's rules (credits, idempotency, a
// limited key's allowed recipients).
import { simpleParser } from 'mailparser';
import nodemailer from 'nodemailer';
import t, { type Test } from 'tap';
import { funded } from './helpers/agents.js';
import { startApp } from './helpers/app.js';
import { issueAccessKey } from './helpers/keys.js';
import { callTool, mcpClient } from './helpers/mcp.js';
import { startSink } from './helpers/sink.js';

const setUp = async (t: Test) => {
  const sink = await startSink(t);
  const app = await startApp(t, { outbound: { relay: `smtp://127.0.0.1:${sink.port}`, timeoutMs: 5000 } });
  const agent = await funded(app, 20);
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: app.smtpPort, ignoreTLS: true });
  t.teardown(() => transport.close());
  await transport.sendMail({
    from: '"Alice Example" <alice@example.com>',
    to: [agent.email, 'carol@example.net'],
    cc: 'dave@example.org',
    subject: 'Quarterly numbers',
    text: 'Can you send the numbers?',
    messageId: '<q-2@example.com>',
    inReplyTo: '<q-1@example.com>',
    references: ['<q-0@example.com>', '<q-1@example.com>'],
  });
  /** What the sink received for a recipient, parsed. */
  const delivered = async (recipient: string) => {
    await app.app.queues.delivery.runOnce();
    const message = sink.messages.filter((item) => item.to.includes(recipient)).pop();
    if (!message) throw new Error(`nothing delivered to ${recipient}`);
    return simpleParser(message.raw);
  };
  return { app, agent, sink, transport, delivered };
};

t.test('REST reply: to the sender, Re: subject, In-Reply-To and References at the sink, nothing quoted', async (t) => {
  const { app, agent, delivered } = await setUp(t);
  const sent = await app.api('POST', '/api/v1/agent/email/1/reply', { key: agent.apiKey, body: { text: 'Attached tomorrow.' } });
  t.equal(sent.status, 200);
  t.equal(sent.body.status, 'accepted');
  const mail = await delivered('alice@example.com');
  t.same(mail.to && !Array.isArray(mail.to) && mail.to.value.map((entry) => entry.address), ['alice@example.com']);
  t.equal(mail.cc, undefined, 'a reply has no cc');
  t.equal(mail.subject, 'Re: Quarterly numbers');
  t.equal(mail.inReplyTo, '<q-2@example.com>');
  t.same(mail.references, ['<q-0@example.com>', '<q-1@example.com>', '<q-2@example.com>'], "RFC 5322 3.6.4: the parent's References, then its Message-ID");
  t.equal(mail.text?.trim(), 'Attached tomorrow.', 'nothing quoted unless asked');
  const original = await app.api('GET', '/api/v1/agent/email/1?markAsRead=false', { key: agent.apiKey });
  const thread = await app.api('GET', `/api/v1/agent/threads/${original.body.threadId}`, { key: agent.apiKey });
  t.same(
    thread.body.messages.map((item: { folder: string }) => item.folder),
    ['INBOX', 'Sent'],
    "the Sent copy is in the original's thread",
  );
  const balance = await app.api('GET', '/api/v1/agent/balance', { key: agent.apiKey });
  t.equal(balance.body.credits, 19, 'one credit per recipient, as any send');
});

t.test('REST reply-all: the others in cc without this mailbox; quote on request; a reply to Sent goes to its recipients', async (t) => {
  const { app, agent, delivered } = await setUp(t);
  const sent = await app.api('POST', '/api/v1/agent/email/1/reply-all', {
    key: agent.apiKey,
    body: { text: 'Looping everyone in.', html: '<p>Looping everyone in.</p>', quote: true },
  });
  t.equal(sent.status, 200);
  const mail = await delivered('dave@example.org');
  t.same(mail.to && !Array.isArray(mail.to) && mail.to.value.map((entry) => entry.address), ['alice@example.com']);
  t.same(mail.cc && !Array.isArray(mail.cc) && mail.cc.value.map((entry) => entry.address).sort(), ['carol@example.net', 'dave@example.org']);
  t.match(mail.text, /^Looping everyone in\.\n\nOn .+, Alice Example <alice@example\.com> wrote:\n> Can you send the numbers\?/);
  t.match(mail.html, /<blockquote type="cite">Can you send the numbers\?/);
  const again = await app.api('POST', '/api/v1/agent/email/1/reply?folder=Sent', { key: agent.apiKey, body: { text: 'Following up.' } });
  t.equal(again.status, 200);
  const followUp = await delivered('alice@example.com');
  t.equal(followUp.subject, 'Re: Quarterly numbers', 'no second Re:');
  t.same(
    followUp.to && !Array.isArray(followUp.to) && followUp.to.value.map((entry) => entry.address),
    ['alice@example.com'],
    "to the Sent message's To, not to ourselves",
  );
  t.equal(followUp.inReplyTo, sent.body.messageId);
});

t.test('the send path rules: idempotency, allowed recipients, permissions, a missing message', async (t) => {
  const { app, agent } = await setUp(t);
  const body = { text: 'Once.', idempotencyKey: 'reply-1' };
  const first = await app.api('POST', '/api/v1/agent/email/1/reply', { key: agent.apiKey, body });
  const second = await app.api('POST', '/api/v1/agent/email/1/reply', { key: agent.apiKey, body });
  t.equal(second.body.replayed, true, 'the same key and reply: replayed');
  t.equal(second.body.id, first.body.id);
  const other = await app.api('POST', '/api/v1/agent/email/1/reply-all', { key: agent.apiKey, body });
  t.equal(other.status, 409, 'the same key for another message');
  const limited = await issueAccessKey(app, agent.apiKey, {
    name: 'replier',
    kind: 'mail',
    permissions: ['mail:send'],
    allowedRecipients: ['alice@example.com'],
    dailyRecipientLimit: 5,
    totalRecipientLimit: 5,
  });
  t.equal((await app.api('POST', '/api/v1/agent/email/1/reply', { key: limited.apiKey, body: { text: 'ok' } })).status, 200, 'within the allowed recipients');
  const all = await app.api('POST', '/api/v1/agent/email/1/reply-all', { key: limited.apiKey, body: { text: 'everyone' } });
  t.equal(all.status, 403, 'reply-all reaches recipients the key may not');
  const quoting = await app.api('POST', '/api/v1/agent/email/1/reply', { key: limited.apiKey, body: { text: 'q', quote: true } });
  t.equal(quoting.status, 403, 'quoting needs mail:read');
  const reader = await issueAccessKey(app, agent.apiKey, { name: 'reader', kind: 'mail', permissions: ['mail:read'] });
  t.equal((await app.api('POST', '/api/v1/agent/email/1/reply', { key: reader.apiKey, body: { text: 'no' } })).status, 403, 'a read-only key cannot reply');
  t.equal((await app.api('POST', '/api/v1/agent/email/99/reply', { key: agent.apiKey, body: { text: 'x' } })).status, 404);
  t.equal((await app.api('POST', '/api/v1/agent/email/1/reply?uidValidity=1', { key: agent.apiKey, body: { text: 'x' } })).status, 409);
  t.equal((await app.api('POST', '/api/v1/agent/email/1/reply', { key: agent.apiKey, body: { html: '<p>x</p>' } })).status, 400, 'text is required');
});

t.test('MCP reply_email, list_threads, get_thread', async (t) => {
  const { app, agent, delivered } = await setUp(t);
  const client = await mcpClient(t, app.baseUrl, { key: agent.apiKey });
  const reply = await callTool(client, 'reply_email', { id: '1', text: 'Via MCP.', all: true, idempotencyKey: 'mcp-1' });
  t.equal(reply.isError, false);
  t.equal(reply.body.status, 'accepted');
  const mail = await delivered('carol@example.net');
  t.equal(mail.inReplyTo, '<q-2@example.com>');
  t.same(mail.references, ['<q-0@example.com>', '<q-1@example.com>', '<q-2@example.com>'], 'References as over REST');
  t.equal(mail.subject, 'Re: Quarterly numbers');
  t.same(
    mail.cc && !Array.isArray(mail.cc) && mail.cc.value.map((entry) => entry.address).sort(),
    ['carol@example.net', 'dave@example.org'],
    'all: the others in cc',
  );
  const threads = await callTool(client, 'list_threads', {});
  t.equal(threads.body.threads.length, 1);
  t.equal(threads.body.threads[0].messageCount, 2);
  const thread = await callTool(client, 'get_thread', { id: threads.body.threads[0].id });
  t.same(
    thread.body.messages.map((item: { folder: string; id: string }) => `${item.folder}/${item.id}`),
    ['INBOX/1', 'Sent/1'],
  );
  const missing = await callTool(client, 'reply_email', { id: '7', text: 'x' });
  t.equal(missing.isError, true);
  t.equal(missing.body.code, 'not_found');
});

t.test('a reply goes to the Reply-To when there is one, and carries its attachments', async (t) => {
  const { app, agent, transport, delivered } = await setUp(t);
  await transport.sendMail({
    from: 'alerts@example.com',
    replyTo: 'Support Desk <desk@example.com>',
    to: agent.email,
    subject: 'Re: Ticket 42',
    text: 'Please send the log.',
    messageId: '<ticket-42@example.com>',
  });
  const attachment = { filename: 'build.log', content: Buffer.from('line 1\nline 2\n').toString('base64'), encoding: 'base64', contentType: 'text/plain' };
  const sent = await app.api('POST', '/api/v1/agent/email/2/reply', { key: agent.apiKey, body: { text: 'Log attached.', attachments: [attachment] } });
  t.equal(sent.status, 200);
  const mail = await delivered('desk@example.com');
  t.same(mail.to && !Array.isArray(mail.to) && mail.to.value.map((entry) => entry.address), ['desk@example.com'], 'RFC 5322 3.6.2: Reply-To, not From');
  t.equal(mail.subject, 'Re: Ticket 42', 'an existing Re: is not doubled');
  t.equal(mail.inReplyTo, '<ticket-42@example.com>');
  t.same([mail.references].flat(), ['<ticket-42@example.com>'], 'no References or In-Reply-To on the original: its Message-ID alone');
  t.same(
    mail.attachments.map((item) => [item.filename, item.content.toString()]),
    [['build.log', 'line 1\nline 2\n']],
  );
});
