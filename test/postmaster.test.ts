// RFC 5321 section 4.5.1: mail to postmaster@ every domain received here is accepted (in any
// case of "postmaster"): on the mail domain it reaches the mailbox smtp.postmaster names, on a
// custom domain its holder, unless a mailbox or alias of its own has the address.
import { join } from 'node:path';
import t from 'tap';
import { funded } from './helpers/agents.js';
import { startApp, type TestApp } from './helpers/app.js';
import { hostedHolder, startDomainApp } from './helpers/domains.js';
import { imapLogin } from './helpers/imap.js';
import { smtpDialog, smtpSend } from './helpers/smtp.js';

const subjectsIn = async (app: TestApp, key: string): Promise<string[]> =>
  ((await app.api('GET', '/api/v1/agent/inbox', { key })).body.emails as { subject: string }[]).map((email) => email.subject);

const rcpt = async (app: TestApp, address: string): Promise<string> =>
  (await smtpDialog(app.smtpPort, ['EHLO client.example', 'MAIL FROM:<someone@example.org>', `RCPT TO:<${address}>`, 'QUIT']))[3];

t.test('postmaster@ the mail domain: refused while smtp.postmaster is unset, then delivered to the mailbox it names', async (t) => {
  const dataDir = join(t.testdir({}), 'data');
  const first = await startApp(t, { dataDir });
  t.match(await rcpt(first, 'postmaster@agents.localhost'), /^550 5\.1\.1/, 'nowhere to deliver it');
  const ops = await first.register('ops');
  await first.app.stop();

  // The mailbox must exist before a setting can name it: the second start names the first's.
  const app = await startApp(t, { dataDir, smtp: { postmaster: ops.email } });
  t.match(await rcpt(app, 'PostMaster@Agents.Localhost'), /^250/, '"postmaster" in any case');
  t.match(await rcpt(app, 'postmaster@elsewhere.example'), /^550 5\.1\.1/, 'only for a domain received here');
  t.match(await rcpt(app, 'postmasters@agents.localhost'), /^550 5\.1\.1/);

  await smtpSend(app.smtpPort, { from: 'someone@example.org', to: 'postmaster@agents.localhost', subject: 'your server', text: 'rejects our mail' });
  t.same(await subjectsIn(app, ops.apiKey), ['your server']);

  const sender = await funded(app, 5);
  const sent = await app.api('POST', '/api/v1/agent/send', {
    key: sender.apiKey,
    body: { to: 'postmaster@agents.localhost', subject: 'from inside', text: 'hi' },
  });
  t.equal(sent.status, 200, JSON.stringify(sent.body));
  t.same(await subjectsIn(app, ops.apiKey), ['from inside', 'your server'], 'a local send reaches it too');

  await t.rejects(imapLogin(t, app.imapPort, 'postmaster@agents.localhost', ops.apiKey), 'postmaster@ names a role, not an account to sign in to');
});

t.test("postmaster@ a custom domain: its holder's mailbox, unless a mailbox or alias has the address", async (t) => {
  const { app, dns } = await startDomainApp(t);
  const { holder, key, domain } = await hostedHolder(app, dns, 'team.example');
  t.match(await rcpt(app, 'postmaster@team.example'), /^250/);
  await smtpSend(app.smtpPort, { from: 'someone@example.org', to: 'postmaster@team.example', subject: 'to the holder', text: 'x' });
  t.same(await subjectsIn(app, holder.apiKey), ['to the holder']);

  const box = await app.api('POST', `/api/user/domains/${domain.id}/mailboxes`, { key, body: { localPart: 'ops' } });
  await app.api('POST', `/api/user/domains/${domain.id}/aliases`, { key, body: { localPart: 'postmaster', mailbox: box.body.email } });
  await smtpSend(app.smtpPort, { from: 'someone@example.org', to: 'postmaster@team.example', subject: 'to the alias', text: 'x' });
  t.same(await subjectsIn(app, box.body.apiKey), ['to the alias'], 'an alias of that name wins');
  t.same(await subjectsIn(app, holder.apiKey), ['to the holder']);
  t.match(await rcpt(app, 'postmaster@unverified.example'), /^550 5\.1\.1/);
});

t.test('agentpost doctor checks postmaster@ every domain it checks', async (t) => {
  const { app, dns } = await startDomainApp(t);
  const { holder } = await hostedHolder(app, dns, 'team.example');
  const report = await app.app.services.doctor.run();
  const postmaster = (subject: string) => report.checks.find((check) => check.check === 'postmaster' && check.subject === subject);
  t.match(postmaster('postmaster@agents.localhost'), {
    status: 'fail',
    detail: /refused with 550: RFC 5321 section 4\.5\.1/,
    fix: /set smtp\.postmaster/,
  });
  t.match(postmaster('postmaster@team.example'), { status: 'ok', detail: `delivered to ${holder.email}` });
  t.equal(report.ok, false, 'a refused postmaster fails the deployment');
});
