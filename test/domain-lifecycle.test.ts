import t from 'tap';
import { ManualClock } from '../src/core/clock.js';
import { domainRecheckRunOnce, sweepRunOnce } from '../src/app/calendar-jobs.js';
import { addVerifiedDomain, hostedHolder, publish, startDomainApp, type DnsRecordView } from './helpers/domains.js';
import { enableTwoFactor } from './helpers/keys.js';
import { smtpDialog, smtpSend } from './helpers/smtp.js';

/** Deleting mailboxes, aliases and domains, adding a domain again, and a domain that loses its records. */

const rcpt = async (port: number, address: string): Promise<string> =>
  (await smtpDialog(port, ['EHLO c.example', 'MAIL FROM:<x@example.org>', `RCPT TO:<${address}>`, 'QUIT']))[3];

t.test('deleting a mailbox: the 2FA code when on, stops at once, keeps its mail until the retention passes', async (t) => {
  const clock = new ManualClock(new Date('2026-05-01T00:00:00Z'));
  const { app, dns } = await startDomainApp(t, { domains: { deletedMailboxRetentionDays: 14 } }, { clock });
  const { holder, key, domain } = await hostedHolder(app, dns, 'team.example');
  const box = (await app.api('POST', `/api/user/domains/${domain.id}/mailboxes`, { key, body: { localPart: 'ops' } })).body;
  await app.api('POST', `/api/user/domains/${domain.id}/aliases`, { key, body: { localPart: 'help', mailbox: 'ops@team.example' } });
  await smtpSend(app.smtpPort, { from: 'x@example.org', to: 'ops@team.example', subject: 'kept', text: 'x' });
  const totp = await enableTwoFactor(app, holder.apiKey, () => clock.now().getTime());
  const path = `/api/user/domains/${domain.id}/mailboxes/${box.id}`;
  const without = await app.api('DELETE', path, { key });
  t.equal(without.status, 403);
  t.match(without.body.error, /factorCode is required/);
  const wrong = await app.api('DELETE', path, { key, body: { factorCode: '000000' } });
  t.equal(wrong.status, 403, `a wrong code: ${JSON.stringify(wrong.body)}`);
  clock.advance(30_000); // a code is accepted once per 30-second step, and enrolling used this one
  const deleted = await app.api('DELETE', path, { key, body: { factorCode: totp.generate({ timestamp: clock.now().getTime() }) } });
  t.equal(deleted.status, 200);
  t.match(deleted.body, {
    id: box.id,
    email: 'ops@team.example',
    deleted: true,
    aliasesRemoved: 1,
    mailRetainedUntil: '2026-05-15T00:00:30.000Z',
    message: /receives nothing, its keys are revoked, and its mail is kept until 2026-05-15T00:00:30\.000Z, then removed/,
  });
  t.match(await rcpt(app.smtpPort, 'ops@team.example'), /^550 5\.1\.1/, 'it receives nothing');
  t.match(await rcpt(app.smtpPort, 'help@team.example'), /^550 5\.1\.1/, 'nor through its alias');
  t.equal((await app.api('GET', '/api/v1/agent/inbox', { key: box.apiKey })).status, 401, 'its key is revoked');
  t.equal((await app.api('GET', path, { key })).status, 404);
  t.same((await app.api('GET', `/api/user/domains/${domain.id}/mailboxes`, { key })).body.mailboxes, []);
  t.match((await app.api('GET', '/api/user/domains', { key })).body.limits.mailboxes, { used: 0 }, 'it no longer counts');
  const again = await app.api('POST', `/api/user/domains/${domain.id}/mailboxes`, { key, body: { localPart: 'ops' } });
  t.equal(again.status, 409, 'the address stays taken');
  t.match(again.body.error, /a deleted mailbox, whose address is never given again/);
  const rows = app.app.store.db
    .prepare('SELECT COUNT(*) AS n FROM messages m JOIN folders f ON f.id = m.folder_id JOIN mailboxes b ON b.id = f.mailbox_id WHERE b.account_id = ?')
    .get(box.id) as { n: number };
  t.equal(rows.n, 1, 'the mail is still there');
  t.equal((await sweepRunOnce(app.app.services)).deletedMailboxesPurged, 0, 'not before the retention passes');
  clock.advance(14 * 24 * 60 * 60 * 1000);
  t.equal((await sweepRunOnce(app.app.services)).deletedMailboxesPurged, 1, 'the housekeeping sweep purges it once it has');
  t.equal((await sweepRunOnce(app.app.services)).deletedMailboxesPurged, 0, 'once');
  const left = app.app.store.db
    .prepare('SELECT COUNT(*) AS n FROM messages m JOIN folders f ON f.id = m.folder_id JOIN mailboxes b ON b.id = f.mailbox_id WHERE b.account_id = ?')
    .get(box.id) as { n: number };
  t.equal(left.n, 0, 'its mail is gone');
  t.equal(
    (await app.api('POST', `/api/user/domains/${domain.id}/mailboxes`, { key, body: { localPart: 'ops' } })).status,
    409,
    'the address is never given to anyone else',
  );
});

t.test('a domain with mailboxes cannot be deleted; without, it goes with its aliases and can be added again', async (t) => {
  const { app, dns } = await startDomainApp(t);
  const { holder, key, domain } = await hostedHolder(app, dns, 'team.example');
  const box = (await app.api('POST', `/api/user/domains/${domain.id}/mailboxes`, { key, body: { localPart: 'ops' } })).body;
  await app.api('POST', `/api/user/domains/${domain.id}/aliases`, { key, body: { localPart: 'support', mailbox: holder.email } });
  await app.api('POST', `/api/user/domains/${domain.id}/aliases`, { key, body: { localPart: 'sales', mailbox: holder.email } });
  const refused = await app.api('DELETE', `/api/user/domains/${domain.id}`, { key });
  t.equal(refused.status, 409);
  t.match(refused.body.error, /still has 1 mailbox\(es\); delete them first/);
  t.equal((await app.api('DELETE', `/api/user/domains/${domain.id}/mailboxes/${box.id}`, { key })).status, 200, 'no 2FA: no code needed');
  const deleted = await app.api('DELETE', `/api/user/domains/${domain.id}`, { key });
  t.same(deleted.body, { id: domain.id, domain: 'team.example', deleted: true, aliasesRemoved: 2 });
  t.match(await rcpt(app.smtpPort, 'support@team.example'), /^550 5\.1\.1/);
  t.same((await app.api('GET', '/api/user/domains', { key })).body.domains, []);
  t.equal((await app.api('GET', `/api/user/domains/${domain.id}`, { key })).status, 404);

  const readded = await addVerifiedDomain(app, dns, key, 'team.example');
  t.not(readded.id, domain.id);
  const token = (records: DnsRecordView[]) => records.find((record) => record.name === '_agentpost.team.example')?.value;
  const selector = (records: DnsRecordView[]) => records.find((record) => record.name.includes('._domainkey.'))?.name;
  t.not(token(readded.records), token(domain.records), 'a new ownership token');
  t.not(selector(readded.records), selector(domain.records), 'a new DKIM key under a new selector');
  t.equal((await app.api('POST', `/api/user/domains/${readded.id}/aliases`, { key, body: { localPart: 'support', mailbox: holder.email } })).status, 200);
  t.match(await rcpt(app.smtpPort, 'support@team.example'), /^250/);
  t.equal(
    (await app.api('POST', `/api/user/domains/${readded.id}/mailboxes`, { key, body: { localPart: 'ops' } })).status,
    409,
    'the deleted mailbox still holds its address',
  );
});

t.test('a domain whose ownership record disappears takes no new addresses; existing mail keeps flowing', async (t) => {
  const { app, dns } = await startDomainApp(t);
  const { holder, key, domain } = await hostedHolder(app, dns, 'team.example');
  await app.api('POST', `/api/user/domains/${domain.id}/aliases`, { key, body: { localPart: 'support', mailbox: holder.email } });
  dns.remove('_agentpost.team.example');
  t.match(await domainRecheckRunOnce(app.app.services, app.app.logger), { checked: 1, failed: 1 }, 'the daily job');
  const listed = (await app.api('GET', '/api/user/domains', { key })).body;
  t.match(listed, { canCreateAddresses: false, canCreateAddressesReason: /no longer shows ownership \(ownership TXT: .*NXDOMAIN\)/ });
  const refused = await app.api('POST', `/api/user/domains/${domain.id}/aliases`, { key, body: { localPart: 'new', mailbox: holder.email } });
  t.equal(refused.status, 409);
  t.match(refused.body.error, /existing addresses keep working; new ones need the records back and a verify/);
  await smtpSend(app.smtpPort, { from: 'x@example.org', to: 'support@team.example', subject: 'still here', text: 'x' });
  t.equal((await app.api('GET', '/api/v1/agent/inbox', { key: holder.apiKey })).body.emails[0].subject, 'still here');
  publish(
    dns,
    domain.records.filter((record) => record.name === '_agentpost.team.example'),
  );
  t.equal((await app.api('POST', `/api/user/domains/${domain.id}/verify`, { key })).body.status, 'verified');
  t.equal((await app.api('POST', `/api/user/domains/${domain.id}/aliases`, { key, body: { localPart: 'new', mailbox: holder.email } })).status, 200);
});

t.test('an alias is removed when its target mailbox is deleted, and can point at a domain mailbox of the holder only while it lives', async (t) => {
  const { app, dns } = await startDomainApp(t);
  const { key, domain } = await hostedHolder(app, dns, 'team.example');
  const box = (await app.api('POST', `/api/user/domains/${domain.id}/mailboxes`, { key, body: { localPart: 'ops' } })).body;
  await app.api('DELETE', `/api/user/domains/${domain.id}/mailboxes/${box.id}`, { key });
  const alias = await app.api('POST', `/api/user/domains/${domain.id}/aliases`, { key, body: { localPart: 'help', mailbox: 'ops@team.example' } });
  t.equal(alias.status, 404, 'a deleted mailbox is no target');
});
