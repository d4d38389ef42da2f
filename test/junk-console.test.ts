// The owner's console and junk: the agent's Junk folder with a "Not junk" button on each
// message, which moves it to INBOX and trains the agent's filter; the verdict on a message's
// page, and its "Junk" button.
import t from 'tap';
import { startApp } from './helpers/app.js';
import { signedInConsole } from './helpers/console.js';
import { ham, judge, mailTo, modelOf, spam } from './helpers/junk.js';
import { makeOwner } from './helpers/owners.js';

t.test('the Junk folder lists with "Not junk"; the message page shows the verdict and judges', async (t) => {
  const app = await startApp(t);
  const owner = await makeOwner(app, 'junk-owner@example.com', 'console password');
  const agent = await app.register();
  await app.api('POST', '/api/user/agents/claim', { key: owner.token, body: { apiKey: agent.apiKey } });
  await mailTo(app, agent.email, ham(1));
  await mailTo(app, agent.email, spam(1));
  await judge(app, agent.apiKey, ham(1).subject, true);
  const client = await signedInConsole(app.baseUrl, owner);

  const junk = await client.get(`/agents/${agent.userId}/inbox?folder=Junk`);
  t.equal(junk.status, 200);
  t.match(junk.text, /aria-current="page">Junk</, 'a Junk tab');
  t.match(junk.text, /Meeting notes 1/);
  t.match(junk.text, new RegExp(`action="/agents/${agent.userId}/mail/Junk/1/junk"`), 'a form per message');
  t.match(junk.text, /name="junk" value="false"><button type="submit">Not junk<\/button>/);
  const moved = await client.post(`/agents/${agent.userId}/mail/Junk/1/junk`, { junk: 'false' });
  t.equal(moved.status, 303);
  t.equal(moved.location, `/agents/${agent.userId}/inbox?folder=Junk`, 'back to the folder it was judged in');
  t.notMatch((await client.get(`/agents/${agent.userId}/inbox?folder=Junk`)).text, /Meeting notes 1/, 'gone from Junk');
  const inbox = await app.api('GET', '/api/v1/agent/inbox', { key: agent.apiKey });
  t.match(
    inbox.body.emails.find((email: { subject: string }) => email.subject === ham(1).subject),
    { isJunk: false, keywords: undefined },
    'in INBOX again, not junk',
  );
  t.same(await modelOf(app, agent.email), { ham: 1, junk: 0 }, "the agent's filter learned it");

  const page = await client.get(`/agents/${agent.userId}/mail/INBOX/2`);
  t.match(page.text, /<dt>Junk filter<\/dt><dd>not junk, 0 points of 3/);
  t.match(page.text, /0: not used yet: this mailbox has judged 0 messages junk and 0 not junk/, 'the verdict as it was when the message arrived');
  t.match(page.text, /name="junk" value="true"><button type="submit" class="danger">Junk<\/button>/, 'a message outside Junk can be judged junk');
  const judged = await client.post(`/agents/${agent.userId}/mail/INBOX/2/junk`, { junk: 'true' });
  t.equal(judged.status, 303);
  t.same(await modelOf(app, agent.email), { ham: 1, junk: 1 });
});
