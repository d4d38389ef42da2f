import t from 'tap';
import { funded } from './helpers/agents.js';
import { hostedHolder, startDomainApp } from './helpers/domains.js';
import { imapLogin } from './helpers/imap.js';
import { callTool, mcpClient } from './helpers/mcp.js';
import { storedRaw } from './helpers/mail.js';
import { smtpDialog, smtpSend, submissionTransport } from './helpers/smtp.js';

/** Mail to aliases and domain mailboxes over real SMTP, and sending as an alias. */

const inboxOf = async (app: any, key: string) => (await app.api('GET', '/api/v1/agent/inbox', { key })).body.emails as any[];

t.test('the MX accepts aliases and mailboxes of a verified domain, 550 5.1.1 for every other address on it', async (t) => {
  const { app, dns } = await startDomainApp(t);
  const { holder, key, domain } = await hostedHolder(app, dns, 'team.example');
  await app.api('POST', `/api/user/domains/${domain.id}/aliases`, { key, body: { localPart: 'support', mailbox: holder.email } });
  const box = await app.api('POST', `/api/user/domains/${domain.id}/mailboxes`, { key, body: { localPart: 'ops' } });
  const replies = await smtpDialog(app.smtpPort, [
    'EHLO client.example',
    'MAIL FROM:<someone@example.org>',
    'RCPT TO:<support@team.example>',
    'RCPT TO:<Ops@Team.Example>',
    'RCPT TO:<nobody@team.example>',
    'RCPT TO:<support@other.example>',
    'QUIT',
  ]);
  t.match(replies[3], /^250/, 'the alias');
  t.match(replies[4], /^250/, 'the mailbox, case-insensitively');
  t.match(replies[5], /^550 5\.1\.1 <nobody@team\.example>/);
  t.match(replies[6], /^550 5\.1\.1/);

  await smtpSend(app.smtpPort, { from: 'someone@example.org', to: ['support@team.example', 'ops@team.example'], subject: 'hello team', text: 'hi' });
  const holderInbox = await inboxOf(app, holder.apiKey);
  t.same(
    holderInbox.map((message) => message.subject),
    ['hello team'],
    "the alias's mail lands in the mailbox's INBOX",
  );
  t.same(
    (await inboxOf(app, box.body.apiKey)).map((message) => message.subject),
    ['hello team'],
  );
});

t.test('a message to a mailbox and its alias is stored once', async (t) => {
  const { app, dns } = await startDomainApp(t);
  const { holder, key, domain } = await hostedHolder(app, dns, 'team.example');
  await app.api('POST', `/api/user/domains/${domain.id}/aliases`, { key, body: { localPart: 'a', mailbox: holder.email } });
  await app.api('POST', `/api/user/domains/${domain.id}/aliases`, { key, body: { localPart: 'b', mailbox: holder.email } });
  await smtpSend(app.smtpPort, { from: 'x@example.org', to: ['a@team.example', 'b@team.example', holder.email], subject: 'once', text: 'x' });
  t.equal((await inboxOf(app, holder.apiKey)).length, 1);
});

t.test('a domain mailbox works as a registered agent: REST, MCP, IMAP, submission', async (t) => {
  const { app, dns } = await startDomainApp(t);
  const { key, domain } = await hostedHolder(app, dns, 'team.example');
  const box = (await app.api('POST', `/api/user/domains/${domain.id}/mailboxes`, { key, body: { localPart: 'ops' } })).body;
  await app.app.services.accounts.addCredits(box.email, 10);
  await app.app.services.sending.setState(box.email, 'standard');
  t.match((await app.api('GET', '/api/v1/agent/balance', { key: box.apiKey })).body, { email: 'ops@team.example', credits: 10 });
  await smtpSend(app.smtpPort, { from: 'x@example.org', to: 'ops@team.example', subject: 'for ops', text: 'x' });
  const mcp = await mcpClient(t, app.baseUrl, { key: box.apiKey });
  t.same(
    (await callTool(mcp, 'check_inbox')).body.emails.map((message: any) => message.subject),
    ['for ops'],
  );
  const imap = await imapLogin(t, app.imapPort, 'ops@team.example', box.apiKey);
  const status = await imap.status('INBOX', { messages: true });
  t.equal(status === false ? undefined : status.messages, 1);
  const peer = await funded(app, 0);
  const transport = submissionTransport(t, app.submissionPort, 'ops@team.example', box.apiKey);
  await transport.sendMail({ from: 'ops@team.example', to: peer.email, subject: 'from ops', text: 'x' });
  t.same(
    (await inboxOf(app, peer.apiKey)).map((message) => [message.subject, message.from.email]),
    [['from ops', 'ops@team.example']],
  );
});

t.test("send-as: from may be an alias of the mailbox (REST, MCP, submission), never anyone else's", async (t) => {
  const { app, dns } = await startDomainApp(t);
  const { holder, key, domain } = await hostedHolder(app, dns, 'team.example');
  await app.app.services.accounts.addCredits(holder.email, 20);
  await app.app.services.sending.setState(holder.email, 'standard');
  const other = await funded(app, 5);
  const alias = (await app.api('POST', `/api/user/domains/${domain.id}/aliases`, { key, body: { localPart: 'support', mailbox: holder.email } })).body;
  const sent = await app.api('POST', '/api/v1/agent/send', {
    key: holder.apiKey,
    body: { from: { email: 'Support@team.example', name: 'Support' }, to: other.email, subject: 'as alias', text: 'x' },
  });
  t.equal(sent.status, 200);
  const received = (await inboxOf(app, other.apiKey))[0];
  t.same(received.from, { name: 'Support', email: 'support@team.example' });
  const sentCopy = (await app.api('GET', '/api/v1/agent/inbox?folder=Sent', { key: holder.apiKey })).body.emails[0];
  t.equal(sentCopy.from.email, 'support@team.example');
  t.match((await app.api('GET', `/api/v1/agent/outbound/${sent.body.id}`, { key: holder.apiKey })).body, { id: sent.body.id });

  const mcp = await mcpClient(t, app.baseUrl, { key: holder.apiKey });
  t.equal((await callTool(mcp, 'send_email', { from: 'support@team.example', to: other.email, subject: 'by mcp', text: 'x' })).isError, false);

  const transport = submissionTransport(t, app.submissionPort, holder.email, holder.apiKey);
  await transport.sendMail({
    envelope: { from: 'support@team.example', to: [other.email] },
    from: 'Support <support@team.example>',
    to: other.email,
    subject: 'by submission',
    text: 'x',
  });
  t.same(
    (await inboxOf(app, other.apiKey)).map((message) => message.from.email),
    ['support@team.example', 'support@team.example', 'support@team.example'],
  );

  const theirs = await app.api('POST', '/api/v1/agent/send', {
    key: other.apiKey,
    body: { from: 'support@team.example', to: holder.email, subject: 'x', text: 'x' },
  });
  t.equal(theirs.status, 403, 'another mailbox may not use the alias');
  t.match(theirs.body.error, /from must be this account's address .* or an alias assigned to it/);
  await t.rejects(transport.sendMail({ from: 'someone@team.example', to: other.email, subject: 'x', text: 'x' }), /550/);
  t.equal((await app.api('DELETE', `/api/user/domains/${domain.id}/aliases/${alias.id}`, { key })).status, 200);
  t.equal(
    (await app.api('POST', '/api/v1/agent/send', { key: holder.apiKey, body: { from: 'support@team.example', to: other.email, subject: 'x', text: 'x' } }))
      .status,
    403,
    'a deleted alias is no sender',
  );
  const refused = await smtpDialog(app.smtpPort, ['EHLO c.example', 'MAIL FROM:<x@example.org>', 'RCPT TO:<support@team.example>', 'QUIT']);
  t.match(refused[3], /^550 5\.1\.1/, 'nor a recipient');
});

t.test('mail between addresses on a hosted domain is stored at once, not sent out', async (t) => {
  const { app, dns } = await startDomainApp(t);
  const { holder, key, domain } = await hostedHolder(app, dns, 'team.example');
  await app.api('POST', `/api/user/domains/${domain.id}/aliases`, { key, body: { localPart: 'support', mailbox: holder.email } });
  const sender = await funded(app, 5);
  const sent = await app.api('POST', '/api/v1/agent/send', {
    key: sender.apiKey,
    body: { to: ['support@team.example', 'nobody@team.example'], subject: 'local', text: 'x' },
  });
  const outcome = await app.api('GET', `/api/v1/agent/outbound/${sent.body.id}`, { key: sender.apiKey });
  const statuses = Object.fromEntries(outcome.body.recipients.map((recipient: any) => [recipient.email, recipient.status]));
  t.same(statuses, { 'support@team.example': 'delivered', 'nobody@team.example': 'failed' });
  t.same(
    (await inboxOf(app, holder.apiKey)).map((message) => message.subject),
    ['local'],
  );
});

t.test('a send to a mailbox and its alias takes the way in of mail from the MX: one copy, our trace field and verdict on top', async (t) => {
  const { app, dns } = await startDomainApp(t);
  const { holder, key, domain } = await hostedHolder(app, dns, 'team.example');
  await app.api('POST', `/api/user/domains/${domain.id}/aliases`, { key, body: { localPart: 'support', mailbox: holder.email } });
  const sender = await funded(app, 5);
  const sent = await app.api('POST', '/api/v1/agent/send', {
    key: sender.apiKey,
    body: { to: ['support@team.example', holder.email], subject: 'to both', text: 'x' },
  });
  const outcome = await app.api('GET', `/api/v1/agent/outbound/${sent.body.id}`, { key: sender.apiKey });
  t.same(
    outcome.body.recipients.map((recipient: any) => recipient.status),
    ['delivered', 'delivered'],
    'both recipients delivered',
  );
  const inbox = await inboxOf(app, holder.apiKey);
  t.equal(inbox.length, 1, 'one copy in the mailbox, as the MX stores one');
  const raw = (await storedRaw(app.app, holder.email, inbox[0].id)).toString('latin1');
  const [trace, verdict] = raw.split(/\r\n(?=\S)/);
  t.match(
    trace,
    new RegExp(
      `^Received: from \\S+ \\(authenticated sender, rest\\)\\r\\n\\tby \\S+ \\(agentpost\\) with HTTP id ${sent.body.id}\\r\\n\\tfor <support@team\\.example>; `,
    ),
  );
  t.match(verdict, new RegExp(`^Authentication-Results: \\S+;\\r\\n\\tauth=pass smtp\\.auth=${sender.email.replace(/[.+]/g, '\\$&')}`));
  const read = await app.api('GET', `/api/v1/agent/email/${inbox[0].id}`, { key: holder.apiKey });
  t.equal(read.body.trust, 'verified', 'the stored verdict: sent by a mailbox of this service');
});
