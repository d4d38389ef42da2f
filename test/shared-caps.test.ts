import t from 'tap';
import type { TestApp } from './helpers/app.js';
import { addVerifiedDomain, hostedHolder, startDomainApp } from './helpers/domains.js';
import { signedInConsole } from './helpers/console.js';
import { makeOwner } from './helpers/owners.js';

/**
 * Contract Limits: "Shared and related-mailbox caps also apply". An owner's own mailbox, the
 * agents it claimed and the domain mailboxes it made share one daily cap, the highest daily
 * limit of one of them, so more mailboxes never add up to more mail.
 */
const send = (app: TestApp, key: string, to: string[]) => app.api('POST', '/api/v1/agent/send', { key, body: { to, subject: 'shared cap', text: 'x' } });
const recipients = (count: number, tag: string) => Array.from({ length: count }, (_, index) => `r${index}-${tag}@example.com`);

t.test("ten mailboxes of one owner together stay within the owner's cap", async (t) => {
  const { app, dns } = await startDomainApp(t);
  const ada = await makeOwner(app, 'ada@example.com');
  const me = (await app.api('GET', '/api/user/me', { key: ada.token })).body;
  await app.app.services.hosting.grant(me.address, 30);
  await app.app.services.accounts.addCredits(me.address, 100);
  const domain = await addVerifiedDomain(app, dns, ada.token, 'ada.example');
  const mailboxes: { email: string; apiKey: string }[] = [];
  for (let index = 0; index < 10; index += 1) {
    const made = await app.api('POST', `/api/user/domains/${domain.id}/mailboxes`, { key: ada.token, body: { localPart: `box${index}` } });
    t.equal(made.status, 200);
    await app.app.services.accounts.addCredits(made.body.email, 100);
    mailboxes.push(made.body);
  }
  // Each mailbox is on probation: 10 a day of its own. Alone, ten of them could send 100.
  const status = (await app.api('GET', '/api/v1/agent/sending', { key: mailboxes[9].apiKey })).body;
  t.match(status, { state: 'probation', limits: { recipientsPerDay: 10 }, shared: { accounts: 11, recipientsPerDay: 10, recipientsToday: 0 } });

  for (const [index, mailbox] of mailboxes.slice(0, 5).entries()) t.equal((await send(app, mailbox.apiKey, recipients(2, `m${index}`))).status, 200);
  const sixth = await send(app, mailboxes[5].apiKey, recipients(1, 'm5'));
  t.equal(sixth.status, 429, 'a mailbox that sent nothing today is over the shared cap');
  t.match(sixth.body.error, /shared daily limit of 10 recipients reached: the 11 accounts that share it .* used 10 today, 1 requested/);
  t.ok(Number(sixth.headers.get('retry-after')) > 0, 'until midnight');
  const own = await app.api('POST', '/api/user/send', { key: ada.token, body: { to: 'x@example.com', subject: 's', text: 'x' } });
  t.equal(own.status, 429, "the owner's own mailbox shares it too");
  let accepted = 0;
  for (const mailbox of mailboxes) {
    const used = await app.api('GET', '/api/v1/agent/outbound', { key: mailbox.apiKey });
    accepted += used.body.submissions.reduce((sum: number, submission: { recipientCount: number }) => sum + submission.recipientCount, 0);
  }
  t.equal(accepted, 10, 'ten mailboxes together sent what one may');

  t.equal(
    (await app.api('DELETE', `/api/user/domains/${domain.id}/mailboxes/${(await mailboxIds(app, ada.token, domain.id))[0]}`, { key: ada.token })).status,
    200,
  );
  t.equal((await send(app, mailboxes[6].apiKey, recipients(1, 'm6'))).status, 429, 'deleting a mailbox frees nothing it sent today');

  // The operator raises one account: the group may send what that one may, each member still within its own limit.
  await app.app.services.sending.setState(mailboxes[9].email, 'standard');
  t.match((await app.api('GET', '/api/v1/agent/sending', { key: mailboxes[6].apiKey })).body.shared, { recipientsPerDay: 100, recipientsToday: 10 });
  t.equal((await send(app, mailboxes[6].apiKey, recipients(2, 'm6b'))).status, 200);
});

const mailboxIds = async (app: TestApp, token: string, domainId: string): Promise<string[]> =>
  (await app.api('GET', `/api/user/domains/${domainId}/mailboxes`, { key: token })).body.mailboxes.map((mailbox: { id: string }) => mailbox.id);

t.test('claimed agents share the cap with the owner; an unowned agent is alone; an agent shares with the mailboxes it made', async (t) => {
  const { app, dns } = await startDomainApp(t);
  const ada = await makeOwner(app, 'ada@example.com');
  const claimed = [await app.register('one'), await app.register('two')];
  for (const agent of claimed) {
    await app.app.services.accounts.addCredits(agent.email, 100);
    t.equal((await app.api('POST', '/api/user/agents/claim', { key: ada.token, body: { apiKey: agent.apiKey } })).status, 200);
  }
  t.equal((await send(app, claimed[0].apiKey, recipients(3, 'a'))).status, 200);
  // The per-minute limit (3 on probation) is each account's own; the day is shared.
  t.equal((await send(app, claimed[1].apiKey, recipients(3, 'b'))).status, 200);
  const overview = await (await signedInConsole(app.baseUrl, ada)).get(`/agents/${claimed[1].userId}`);
  t.match(
    overview.text,
    /<dt>Shared<\/dt><dd><span class="usage"><meter [^>]*value="6">6\/10<\/meter> 6 of 10 today<\/span> <span class="muted">across your 3 accounts<\/span>/,
    'the console shows the shared cap',
  );
  t.match((await app.api('GET', '/api/v1/agent/sending', { key: claimed[1].apiKey })).body, {
    usage: { recipientsToday: 3 },
    shared: { accounts: 3, recipientsPerDay: 10, recipientsToday: 6 },
  });

  const loner = await app.register('loner');
  t.notOk('shared' in (await app.api('GET', '/api/v1/agent/sending', { key: loner.apiKey })).body, 'an account in no group has no shared cap');

  const { holder, key } = await hostedHolder(app, dns, 'agent-held.example');
  await app.app.services.accounts.addCredits(holder.email, 100);
  const domainId = (await app.api('GET', '/api/user/domains', { key })).body.domains[0].id;
  const made = (await app.api('POST', `/api/user/domains/${domainId}/mailboxes`, { key, body: { localPart: 'helper' } })).body;
  await app.app.services.accounts.addCredits(made.email, 100);
  t.match((await app.api('GET', '/api/v1/agent/sending', { key: made.apiKey })).body.shared, { accounts: 2, recipientsPerDay: 10 });
  t.equal((await send(app, holder.apiKey, recipients(3, 'h'))).status, 200);
  t.match(
    (await app.api('GET', '/api/v1/agent/sending', { key: made.apiKey })).body.shared,
    { recipientsToday: 3 },
    "the holder's mail counts for its mailbox",
  );
});
