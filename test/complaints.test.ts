import t from 'tap';
import { startApp, type TestApp } from './helpers/app.js';
import { creditsOf, funded } from './helpers/agents.js';
import { arfReport, headerOf, type ArfOptions } from './helpers/arf.js';
import { startSink } from './helpers/sink.js';
import { smtpSendRaw } from './helpers/smtp.js';

/** Sends to `to` through a relay sink; returns the bounce address and the message as the sink got it. */
const setup = async (t: any, to: string[]) => {
  const sink = await startSink(t);
  const app = await startApp(t, { outbound: { relay: `smtp://127.0.0.1:${sink.port}`, timeoutMs: 5000 } });
  const agent = await funded(app, 5);
  const sent = await app.api('POST', '/api/v1/agent/send', { key: agent.apiKey, body: { to, subject: 's', text: 't' } });
  await app.app.queues.delivery.runOnce();
  await sink.waitFor(1);
  const bounceAddress = sink.messages[0].from;
  // The receiving server records the envelope sender as Return-Path (RFC 5321 section 4.4).
  const original = `Return-Path: <${bounceAddress}>\r\n${sink.messages[0].raw.toString('utf8')}`;
  return { app, agent, id: sent.body.id as string, bounceAddress, original };
};

const report = (app: TestApp, bounceAddress: string, options: Omit<ArfOptions, 'to'>) =>
  smtpSendRaw(app.smtpPort, '', [bounceAddress], arfReport({ to: bounceAddress, ...options }));

const suppressionsOf = async (app: TestApp, key: string) => (await app.api('GET', '/api/v1/agent/outbound/suppressions', { key })).body.suppressions;

const stateOf = async (app: TestApp, key: string) => (await app.api('GET', '/api/v1/agent/sending', { key })).body.state;

const statuses = async (app: TestApp, key: string, id: string) =>
  Object.fromEntries((await app.api('GET', `/api/v1/agent/outbound/${id}`, { key })).body.recipients.map((r: any) => [r.email, r.status]));

t.test('a verified complaint suppresses its recipient for good and pauses the account; a duplicate does nothing', async (t) => {
  const { app, agent, id, bounceAddress, original } = await setup(t, ['ok1@remote.test', 'ok2@remote.test']);
  t.equal(await stateOf(app, agent.apiKey), 'standard');
  const answer = await report(app, bounceAddress, { originalRcptTo: ['ok2@remote.test'], original });
  t.match(answer.response, /^250 /);
  const list = await suppressionsOf(app, agent.apiKey);
  t.match(list, [{ address: 'ok2@remote.test', reason: 'complaint', canRelease: false }]);
  const release = await app.api('DELETE', `/api/v1/agent/outbound/suppressions/${list[0].id}`, { key: agent.apiKey });
  t.equal(release.status, 403);
  t.same(await statuses(app, agent.apiKey, id), { 'ok1@remote.test': 'delivered', 'ok2@remote.test': 'delivered' }, 'the outcome stays delivered');
  t.equal(await creditsOf(app, agent.apiKey), 3, 'credits unchanged');
  t.equal((await app.api('GET', '/api/v1/agent/inbox', { key: agent.apiKey })).body.emails.length, 0, 'a report is evidence, not mail');

  // One complaint among the last 100 recipients is 1%, past the 0.5% of the contract.
  t.equal(await stateOf(app, agent.apiKey), 'paused');
  const refused = await app.api('POST', '/api/v1/agent/send', { key: agent.apiKey, body: { to: 'x@remote.test', subject: 's', text: 't' } });
  t.equal(refused.status, 403);

  await app.app.services.sending.setState(agent.email, 'standard');
  await report(app, bounceAddress, { originalRcptTo: ['ok2@remote.test'], original });
  t.same(await suppressionsOf(app, agent.apiKey), list, 'the same single suppression');
  t.equal(await stateOf(app, agent.apiKey), 'standard', 'a duplicate does not pause again');
});

t.test('a forged token is refused at RCPT', async (t) => {
  const { app, agent, bounceAddress, original } = await setup(t, ['ok1@remote.test']);
  const forged = bounceAddress.replace(/-[0-9a-f]{16}@/, '-0123456789abcdef@');
  await t.rejects(report(app, forged, { original }), { responseCode: 550, response: /5\.1\.1/ } as any);
  t.same(await suppressionsOf(app, agent.apiKey), []);
  t.equal(await stateOf(app, agent.apiKey), 'standard');
});

t.test('reports that are not verified complaints about one recipient of ours are not processed', async (t) => {
  const { app, agent, id, bounceAddress, original } = await setup(t, ['ok1@remote.test', 'ok2@remote.test']);
  const ok2 = { originalRcptTo: ['ok2@remote.test'] };
  const foreign = original.replace(/^Message-ID: <[^>]+>/im, 'Message-ID: <someone-else@remote.test>');
  t.not(foreign, original);
  const cases: [string, Omit<ArfOptions, 'to'>][] = [
    ['about a message that is not ours', { ...ok2, original: foreign }],
    ['not-spam', { ...ok2, original, feedbackType: 'not-spam' }],
    ['virus', { ...ok2, original, feedbackType: 'virus' }],
    ['without the original', { ...ok2, original, withoutOriginal: true }],
    ['an unknown version', { ...ok2, original, version: '2' }],
    ['naming a stranger', { originalRcptTo: ['stranger@remote.test'], original }],
    ['naming nobody, about a message to two', { original }],
  ];
  for (const [name, options] of cases) t.match((await report(app, bounceAddress, options)).response, /^250 /, name);
  const abuseText = `From: abuse@remote.test\r\nTo: ${bounceAddress}\r\nSubject: abuse report\r\n\r\nFeedback-Type: abuse\r\n`;
  await smtpSendRaw(app.smtpPort, '', [bounceAddress], abuseText);
  t.same(await suppressionsOf(app, agent.apiKey), []);
  t.equal(await stateOf(app, agent.apiKey), 'standard');
  t.same(await statuses(app, agent.apiKey, id), { 'ok1@remote.test': 'delivered', 'ok2@remote.test': 'delivered' });
});

t.test('a redacted header-only report about a one-recipient message counts, and turns a releasable suppression into a complaint', async (t) => {
  const { app, agent, bounceAddress, original } = await setup(t, ['reader@remote.test']);
  await app.app.services.suppressions.add(agent.email, 'reader@remote.test', 'manual');
  // Header only, without Message-ID and To: the Return-Path token alone names the submission.
  const header = headerOf(original).replace(/^(Message-ID|To): .*\r\n/gim, '');
  t.notMatch(header, /Message-ID/i);
  await report(app, bounceAddress, { original: header, headersOnly: true, feedbackType: 'fraud' });
  t.match(await suppressionsOf(app, agent.apiKey), [{ address: 'reader@remote.test', reason: 'complaint', canRelease: false }]);
  t.equal((await suppressionsOf(app, agent.apiKey)).length, 1);
  t.equal(await stateOf(app, agent.apiKey), 'paused');
});

t.test('a header-only report whose Return-Path names another submission is not processed', async (t) => {
  const { app, agent, bounceAddress, original } = await setup(t, ['reader@remote.test']);
  const second = await app.api('POST', '/api/v1/agent/send', { key: agent.apiKey, body: { to: 'other@remote.test', subject: 's2', text: 't' } });
  t.equal(second.status, 200);
  const otherRow = (await app.app.store.submissions.recipientsOf(second.body.id))[0];
  const otherBounce = await app.app.services.bounces.envelopeSender(otherRow.id);
  const header = headerOf(original)
    .replace(/^Message-ID: .*\r\n/im, '')
    .replace(bounceAddress, otherBounce);
  await report(app, bounceAddress, { original: header, headersOnly: true });
  t.same(await suppressionsOf(app, agent.apiKey), []);
});
