import t from 'tap';
import { startApp, type TestApp } from './helpers/app.js';
import { creditsOf, funded } from './helpers/agents.js';
import { startSink } from './helpers/sink.js';
import { smtpSendRaw } from './helpers/smtp.js';

const dsn = (to: string, finalRecipient: string, status: string) =>
  [
    'From: MAILER-DAEMON@mx.remote.test',
    `To: ${to}`,
    'Subject: Undelivered Mail Returned to Sender',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=delivery-status; boundary="b1"',
    '',
    '--b1',
    'Content-Type: text/plain',
    '',
    'Your message could not be delivered.',
    '--b1',
    'Content-Type: message/delivery-status',
    '',
    'Reporting-MTA: dns; mx.remote.test',
    '',
    `Final-Recipient: rfc822; ${finalRecipient}`,
    'Action: failed',
    `Status: ${status}`,
    `Diagnostic-Code: smtp; 550 ${status} mailbox unavailable`,
    '',
    '--b1--',
    '',
  ].join('\r\n');

const setup = async (t: any) => {
  const sink = await startSink(t);
  const app = await startApp(t, { outbound: { relay: `smtp://127.0.0.1:${sink.port}`, timeoutMs: 5000 } });
  const agent = await funded(app, 5);
  const sent = await app.api('POST', '/api/v1/agent/send', {
    key: agent.apiKey,
    body: { to: ['ok1@remote.test', 'ok2@remote.test'], subject: 's', text: 't' },
  });
  await app.app.queues.delivery.runOnce();
  await sink.waitFor(1);
  return { app, agent, id: sent.body.id as string, bounceAddress: sink.messages[0].from };
};

const statuses = async (app: TestApp, key: string, id: string) =>
  Object.fromEntries((await app.api('GET', `/api/v1/agent/outbound/${id}`, { key })).body.recipients.map((r: any) => [r.email, r.status]));

t.test('a DSN to a verified bounce address marks the recipient bounced, without refund, and 5.1.1 suppresses', async (t) => {
  const { app, agent, id, bounceAddress } = await setup(t);
  t.equal(await creditsOf(app, agent.apiKey), 3);
  const answer = await smtpSendRaw(app.smtpPort, '', [bounceAddress], dsn(bounceAddress, 'ok2@remote.test', '5.1.1'));
  t.match(answer.response, /^250 /);
  t.same(await statuses(app, agent.apiKey, id), { 'ok1@remote.test': 'delivered', 'ok2@remote.test': 'bounced' });
  t.equal(await creditsOf(app, agent.apiKey), 3, 'a later bounce is not refunded');
  const detail = (await app.api('GET', `/api/v1/agent/outbound/${id}`, { key: agent.apiKey })).body;
  t.match(detail.recipients[1], { status: 'bounced', enhancedCode: '5.1.1', smtpCode: 550, diagnostic: /^DSN: smtp; 550 5\.1\.1/ });
  const list = (await app.api('GET', '/api/v1/agent/outbound/suppressions', { key: agent.apiKey })).body.suppressions;
  t.match(list, [{ address: 'ok2@remote.test', reason: 'bounce', canRelease: true }]);
  const inbox = await app.api('GET', '/api/v1/agent/inbox', { key: agent.apiKey });
  t.equal(inbox.body.emails.length, 0, 'a DSN is evidence, not mail for the INBOX');
});

t.test('a forged token is refused at RCPT with 550 5.1.1; mail without a DSN is not processed', async (t) => {
  const { app, agent, id, bounceAddress } = await setup(t);
  const forged = bounceAddress.replace(/-[0-9a-f]{16}@/, '-0123456789abcdef@');
  await t.rejects(smtpSendRaw(app.smtpPort, '', [forged], dsn(forged, 'ok1@remote.test', '5.1.1')), { responseCode: 550, response: /5\.1\.1/ } as any);
  const otherSubmission = bounceAddress.replace(/\+\d+-/, '+999999-');
  await t.rejects(smtpSendRaw(app.smtpPort, '', [otherSubmission], dsn(otherSubmission, 'ok1@remote.test', '5.1.1')), { responseCode: 550 } as any);
  const plain = `From: postmaster@remote.test\r\nTo: ${bounceAddress}\r\nSubject: Undeliverable: s\r\n\r\n550 5.1.1 ok1@remote.test user unknown\r\n`;
  t.match((await smtpSendRaw(app.smtpPort, '', [bounceAddress], plain)).response, /^250 /);
  const delayed = dsn(bounceAddress, 'ok1@remote.test', '4.2.2').replace('Action: failed', 'Action: delayed');
  await smtpSendRaw(app.smtpPort, '', [bounceAddress], delayed);
  const relayed = dsn(bounceAddress, 'ok1@remote.test', '2.0.0').replace('Action: failed', 'Action: relayed');
  await smtpSendRaw(app.smtpPort, '', [bounceAddress], relayed);
  const stranger = dsn(bounceAddress, 'someone-else@remote.test', '5.1.1');
  await smtpSendRaw(app.smtpPort, '', [bounceAddress], stranger);
  t.same(await statuses(app, agent.apiKey, id), { 'ok1@remote.test': 'delivered', 'ok2@remote.test': 'delivered' });
  t.equal((await app.api('GET', '/api/v1/agent/outbound/suppressions', { key: agent.apiKey })).body.suppressions.length, 0);
});

t.test('a remote server giving up after retries (failed, 4.4.7) bounces without suppressing', async (t) => {
  const { app, agent, id, bounceAddress } = await setup(t);
  await smtpSendRaw(app.smtpPort, '', [bounceAddress], dsn(bounceAddress, 'ok1@remote.test', '4.4.7'));
  t.same(await statuses(app, agent.apiKey, id), { 'ok1@remote.test': 'bounced', 'ok2@remote.test': 'delivered' });
  t.equal((await app.api('GET', '/api/v1/agent/outbound/suppressions', { key: agent.apiKey })).body.suppressions.length, 0);
  t.equal(await creditsOf(app, agent.apiKey), 3);
});
