// Training the junk filter from a mail client (imapflow): a move into Junk is a junk judgment,
// a move out of Junk (but to Trash) a not-junk one, and the $Junk / $NotJunk keywords
// (Thunderbird's Junk / NonJunk too) judge wherever the message is. Each change trains the
// mailbox's model exactly once; a judgment taken back takes its training back.
import t from 'tap';
import { startApp } from './helpers/app.js';
import { imapLogin } from './helpers/imap.js';
import { ham, mailTo, modelOf, spam } from './helpers/junk.js';

t.test('moves into and out of Junk, and keywords, train the model the REST judgments train', async (t) => {
  const app = await startApp(t, { junk: { minJudgments: 1 } });
  const agent = await app.register();
  const trained = async () => {
    await app.app.services.junkTraining.catchUp();
    return await modelOf(app, agent.email);
  };
  await mailTo(app, agent.email, spam(1));
  await mailTo(app, agent.email, ham(1));
  const client = await imapLogin(t, app.imapPort, agent.email, agent.apiKey);
  await client.mailboxOpen('INBOX');

  const moved = await client.messageMove('1', 'Junk', { uid: true });
  t.ok(moved, 'MOVE into Junk (made when first needed)');
  t.same(await trained(), { ham: 0, junk: 1 }, 'a move into Junk is junk');
  await client.mailboxOpen('Junk');
  const [inJunk] = await client.fetchAll('1:*', { uid: true, flags: true });
  t.ok(inJunk.flags?.has('$Junk'), 'the move left the keyword mail clients read');

  await client.messageMove(String(inJunk.uid), 'Archive', { uid: true });
  t.same(await trained(), { ham: 1, junk: 0 }, 'out of Junk to another folder: not junk, the junk training taken back');
  await client.mailboxOpen('Archive');
  const [archived] = await client.fetchAll('1:*', { uid: true, flags: true });
  t.ok(archived.flags?.has('$NotJunk'));
  t.notOk(archived.flags?.has('$Junk'));

  await client.messageMove(String(archived.uid), 'Trash', { uid: true });
  t.same(await trained(), { ham: 1, junk: 0 }, 'deleting (to Trash) is no judgment: the training stays, once');

  await client.mailboxOpen('INBOX');
  await client.messageFlagsAdd('2', ['NonJunk'], { uid: true });
  t.same(await trained(), { ham: 2, junk: 0 }, "Thunderbird's NonJunk keyword judges too");
  await client.messageFlagsAdd('2', ['$Junk'], { uid: true });
  t.same(await trained(), { ham: 1, junk: 0 }, 'both kinds of keyword: no judgment, so its training is taken back');
  await client.messageFlagsRemove('2', ['NonJunk'], { uid: true });
  t.same(await trained(), { ham: 1, junk: 1 }, '$Junk alone: junk, though it stays in INBOX');

  const read = await app.api('GET', '/api/v1/agent/email/2?markAsRead=false', { key: agent.apiKey });
  t.equal(read.body.isJunk, true, 'REST shows the judgment made over IMAP');
});

t.test('a trained message moved around keeps one training; a copy keeps its place in the training queue', async (t) => {
  const app = await startApp(t, { junk: { minJudgments: 1 } });
  const agent = await app.register();
  await mailTo(app, agent.email, spam(1));
  const client = await imapLogin(t, app.imapPort, agent.email, agent.apiKey);
  await client.mailboxOpen('INBOX');
  await client.messageFlagsAdd('1', ['$Junk'], { uid: true });
  // Moved twice, perhaps before the trainer ran: then the queue entry went with each copy.
  await client.mailboxCreate('Work');
  await client.mailboxCreate('Later');
  await client.messageMove('1', 'Work', { uid: true });
  await client.mailboxOpen('Work');
  await client.messageMove('1:*', 'Later', { uid: true });
  await app.app.services.junkTraining.catchUp();
  t.same(await modelOf(app, agent.email), { ham: 0, junk: 1 });
  await client.mailboxOpen('Later');
  await client.messageMove('1:*', 'Junk', { uid: true });
  await app.app.services.junkTraining.catchUp();
  t.same(await modelOf(app, agent.email), { ham: 0, junk: 1 }, 'already trained as junk: a move into Junk adds nothing');
  t.equal((await app.app.store.junk.queued(10)).length, 0, 'nothing left queued');
});
