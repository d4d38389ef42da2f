import t from 'tap';
import type { MxResolver } from '../src/core/outbound.js';
import { creditsOf, funded } from './helpers/agents.js';
import { startApp, type TestApp } from './helpers/app.js';
import { callTool, mcpClient } from './helpers/mcp.js';
import { issueAccessKey } from './helpers/keys.js';
import { startSink, type Sink } from './helpers/sink.js';
import { smtpDialog, submissionTransport } from './helpers/smtp.js';

/** RFC 6531/6532: internationalised addresses, from every way in to the next hop. */
const JOERG = 'jörg@bücher.example';
const JOERG_ASCII_LOCAL = 'joerg@bücher.example';
const A_LABEL = 'xn--bcher-kva.example';

/** MX for the A-label only: DNS is asked in ASCII or not at all. */
const idnResolver = (asked: string[]): MxResolver => ({
  resolveMx: async (name) => {
    asked.push(name);
    if (name === A_LABEL) return [{ exchange: `mx.${A_LABEL}`, priority: 10 }];
    throw Object.assign(new Error('no such domain'), { code: 'ENOTFOUND' });
  },
  resolve4: async (name) => (name === `mx.${A_LABEL}` ? ['127.0.0.1'] : Promise.reject(Object.assign(new Error('x'), { code: 'ENODATA' }))),
  resolve6: async () => Promise.reject(Object.assign(new Error('x'), { code: 'ENODATA' })),
  // No MTA-STS policy (test/mta-sts.test.ts has them).
  resolveTxt: async () => Promise.reject(Object.assign(new Error('x'), { code: 'ENODATA' })),
});

const mxApp = async (t: any, sink: Sink, asked: string[] = []) =>
  startApp(t, { outbound: { port: sink.port, timeoutMs: 5000, allowLoopbackMx: true } }, { resolver: idnResolver(asked) });

const deliverAll = async (app: TestApp) => {
  await app.app.queues.delivery.runOnce();
  await app.app.queues.delivery.idle();
};

const rcpts = (sink: Sink): string[] => sink.commands.filter((line) => line.startsWith('RCPT'));

const outcomes = async (app: TestApp, key: string, id: string) =>
  (await app.api('GET', `/api/v1/agent/outbound/${id}`, { key })).body.recipients.map((r: any) => [r.email, r.status, r.enhancedCode ?? null]);

t.test('REST: EAI recipients are accepted, looked up by A-label and handed over with SMTPUTF8', async (t) => {
  const sink = await startSink(t);
  const asked: string[] = [];
  const app = await mxApp(t, sink, asked);
  const agent = await funded(app, 10);
  const sent = await app.api('POST', '/api/v1/agent/send', {
    key: agent.apiKey,
    body: { to: [JOERG, JOERG_ASCII_LOCAL, `joerg@${A_LABEL}`], subject: 'Grüße', text: 'Schön.' },
  });
  t.equal(sent.status, 200, JSON.stringify(sent.body));
  t.equal(await creditsOf(app, agent.apiKey), 8, 'the U-label and A-label spellings are one recipient');
  await deliverAll(app);
  t.same(asked, [A_LABEL], 'DNS is asked for the A-label');
  t.same(await outcomes(app, agent.apiKey, sent.body.id), [
    [JOERG, 'delivered', '2.0.0'],
    [JOERG_ASCII_LOCAL, 'delivered', '2.0.0'],
  ]);
  t.same(rcpts(sink), [`RCPT TO:<jörg@${A_LABEL}>`, `RCPT TO:<joerg@${A_LABEL}>`], 'RCPT TO carries the domain in ASCII');
  t.equal(sink.messages[0].mailFromArgs.SMTPUTF8, true, 'a non-ASCII local part is declared (RFC 6531 section 3.4)');
});

t.test('no SMTPUTF8 at the next hop: a non-ASCII local part fails 553 5.6.7; an ASCII one goes by its A-label', async (t) => {
  const sink = await startSink(t, { hideSMTPUTF8: true });
  const app = await mxApp(t, sink);
  const agent = await funded(app, 10);
  const eai = await app.api('POST', '/api/v1/agent/send', { key: agent.apiKey, body: { to: JOERG, subject: 's', text: 'x' } });
  const ascii = await app.api('POST', '/api/v1/agent/send', { key: agent.apiKey, body: { to: JOERG_ASCII_LOCAL, subject: 's', text: 'x' } });
  await deliverAll(app);
  t.same(await outcomes(app, agent.apiKey, eai.body.id), [[JOERG, 'failed', '5.6.7']]);
  const detail = (await app.api('GET', `/api/v1/agent/outbound/${eai.body.id}`, { key: agent.apiKey })).body;
  t.match(detail.recipients[0].diagnostic, /does not offer SMTPUTF8/);
  t.same(await outcomes(app, agent.apiKey, ascii.body.id), [[JOERG_ASCII_LOCAL, 'delivered', '2.0.0']]);
  t.same(rcpts(sink), [`RCPT TO:<joerg@${A_LABEL}>`]);
  t.same(sink.messages[0].mailFromArgs, {}, 'an all-ASCII message declares nothing');
});

t.test('MCP send_email takes EAI addresses too; malformed IDNs are refused as invalid', async (t) => {
  const sink = await startSink(t);
  const app = await mxApp(t, sink);
  const agent = await funded(app, 10);
  const client = await mcpClient(t, app.baseUrl, { key: agent.apiKey });
  const sent = await callTool(client, 'send_email', { to: `Jörg Müller <${JOERG}>`, subject: 'Grüße', text: 'x' });
  t.equal(sent.isError, false, JSON.stringify(sent.body));
  for (const to of ['jörg@xn--zz.example', 'jörg@bücher', 'jörg..x@bücher.example']) {
    const refused = await callTool(client, 'send_email', { to, subject: 's', text: 'x' });
    t.match(refused.body, { code: 'invalid_input', error: /not a valid email address/ }, to);
  }
  await deliverAll(app);
  t.same(rcpts(sink), [`RCPT TO:<jörg@${A_LABEL}>`]);
});

t.test('submission: RCPT TO an EAI address is accepted and delivered', async (t) => {
  const sink = await startSink(t);
  const app = await mxApp(t, sink);
  const agent = await funded(app, 10);
  const transport = submissionTransport(t, app.submissionPort, agent.email, agent.apiKey);
  const info = await transport.sendMail({ from: agent.email, to: JOERG, subject: 'Grüße', text: 'Schön.' });
  t.same(info.accepted, [JOERG]);
  await deliverAll(app);
  t.same(rcpts(sink), [`RCPT TO:<jörg@${A_LABEL}>`]);
});

t.test('inbound: mail from an EAI sender with UTF-8 header fields is stored and read back', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  const replies = await smtpDialog(app.smtpPort, [
    'EHLO bücher.example',
    `MAIL FROM:<${JOERG}> SMTPUTF8`,
    `RCPT TO:<${agent.email}>`,
    'DATA',
    `From: Jörg Müller <${JOERG}>\r\nTo: ${agent.email}\r\nSubject: Grüße aus Köln\r\nMessage-ID: <eai@bücher.example>\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\nSchöne Grüße.\r\n.\r\n`,
  ]);
  t.match(replies[1], /SMTPUTF8/, 'the MX offers SMTPUTF8');
  t.match(replies.slice(2), [/^250/, /^250/, /^354/, /^250/]);
  const inbox = await app.api('GET', '/api/v1/agent/inbox', { key: agent.apiKey });
  t.match(inbox.body.emails[0], { subject: 'Grüße aus Köln', from: { name: 'Jörg Müller', email: JOERG } });
  const read = await app.api('GET', `/api/v1/agent/email/${inbox.body.emails[0].id}`, { key: agent.apiKey });
  t.equal(read.body.text.trim(), 'Schöne Grüße.');
});

t.test('access keys: an EAI allowedRecipients entry matches whatever spelling the send uses', async (t) => {
  const sink = await startSink(t);
  const app = await mxApp(t, sink);
  const agent = await funded(app, 10);
  const key = await issueAccessKey(app, agent.apiKey, {
    name: 'eai',
    kind: 'mail',
    permissions: ['mail:send'],
    allowedRecipients: ['Jörg@Bücher.example'],
    dailyRecipientLimit: 5,
    totalRecipientLimit: 5,
  });
  const allowed = await app.api('POST', '/api/v1/agent/send', { key: key.apiKey, body: { to: `jörg@${A_LABEL}`, subject: 's', text: 'x' } });
  t.equal(allowed.status, 200, JSON.stringify(allowed.body));
  const other = await app.api('POST', '/api/v1/agent/send', { key: key.apiKey, body: { to: JOERG_ASCII_LOCAL, subject: 's', text: 'x' } });
  t.equal(other.status, 403);
  const invalid = await app.api('POST', '/api/v1/agent/access-keys', {
    key: agent.apiKey,
    body: { name: 'bad', kind: 'mail', permissions: ['mail:send'], allowedRecipients: ['jörg@xn--zz.example'], dailyRecipientLimit: 5, totalRecipientLimit: 5 },
  });
  t.match(invalid.body, { code: 'invalid_input', error: /allowedRecipients\.0/ });
});
