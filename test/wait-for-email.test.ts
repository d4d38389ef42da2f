// MCP wait_for_email: blocks until INBOX has a newer message (woken by the mailbox watcher
// after the commit, not by polling) or its timeout passes.
import nodemailer from 'nodemailer';
import t from 'tap';
import { startApp } from './helpers/app.js';
import { issueAccessKey } from './helpers/keys.js';
import { callTool, mcpClient } from './helpers/mcp.js';

t.test('waits for the next message, answers at once for one already there, times out empty', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  const client = await mcpClient(t, app.baseUrl, { key: agent.apiKey });
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: app.smtpPort, ignoreTLS: true });
  t.teardown(() => transport.close());
  const waiting = callTool(client, 'wait_for_email', { afterUid: '0', timeoutSeconds: 60 });
  // Sent once the call is (most likely) waiting; had it come first, the wait answers it at once.
  await new Promise((resolve) => setTimeout(resolve, 200));
  await transport.sendMail({ from: 'alice@example.com', to: agent.email, subject: 'Ping', text: 'are you there?' });
  const woke = await waiting;
  t.equal(woke.isError, false);
  t.equal(woke.body.timedOut, false);
  t.same(
    woke.body.emails.map((item: { id: string; subject: string }) => [item.id, item.subject]),
    [['1', 'Ping']],
  );
  t.equal(woke.body.lastUid, '1');

  const already = await callTool(client, 'wait_for_email', { afterUid: '0', timeoutSeconds: 60 });
  t.same(
    already.body.emails.map((item: { id: string }) => item.id),
    ['1'],
    'a message newer than afterUid is answered at once',
  );
  const quiet = await callTool(client, 'wait_for_email', { afterUid: woke.body.lastUid, timeoutSeconds: 1 });
  t.same({ timedOut: quiet.body.timedOut, emails: quiet.body.emails, lastUid: quiet.body.lastUid }, { timedOut: true, emails: [], lastUid: '1' });
  const zero = await callTool(client, 'wait_for_email', { timeoutSeconds: 0 });
  t.equal(zero.body.timedOut, true, 'timeoutSeconds 0 only looks');
});

t.test('arguments and keys: at most 60 s, uidValidity guard, mail:read', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  const client = await mcpClient(t, app.baseUrl, { key: agent.apiKey });
  const long = await callTool(client, 'wait_for_email', { timeoutSeconds: 61 });
  t.match(long, { isError: true, body: { code: 'invalid_input' } });
  const stale = await callTool(client, 'wait_for_email', { uidValidity: '1', timeoutSeconds: 0 });
  t.match(stale, { isError: true, body: { code: 'conflict' } });
  const sender = await issueAccessKey(app, agent.apiKey, {
    name: 's',
    kind: 'mail',
    permissions: ['mail:send'],
    dailyRecipientLimit: 1,
    totalRecipientLimit: 1,
  });
  const senderClient = await mcpClient(t, app.baseUrl, { key: sender.apiKey });
  t.match(await callTool(senderClient, 'wait_for_email', { timeoutSeconds: 0 }), { isError: true, body: { code: 'forbidden' } });
  const reader = await issueAccessKey(app, agent.apiKey, { name: 'r', kind: 'mail', permissions: ['mail:read'] });
  const readerClient = await mcpClient(t, app.baseUrl, { key: reader.apiKey });
  t.match(await callTool(readerClient, 'wait_for_email', { timeoutSeconds: 0 }), { isError: false, body: { timedOut: true } });
});
