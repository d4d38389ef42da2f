// Received mail under one byte budget (src/core/message-intake.ts): small messages in memory,
// large ones, or any while the budget is spent, in the spool until their turn; a full spool
// answers 452 4.3.1 on SMTP and NO [LIMIT] on IMAP, and the sender's retry lands once it drains.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { BodyBudget } from '../src/core/body-budget.js';
import { IntakeFull, MessageIntake } from '../src/core/message-intake.js';
import { MessageSpool } from '../src/store/message-spool.js';
import { startApp } from './helpers/app.js';
import { rawImap } from './helpers/imap.js';
import { imapLogin } from './helpers/imap.js';
import { smtpSendRaw } from './helpers/smtp.js';

const MiB = 1024 * 1024;

const intakeIn = (dir: string, budgetBytes: number, maxSpooledBytes = 64 * MiB) => {
  const spool = join(dir, 'spool');
  const intake = new MessageIntake(new BodyBudget(budgetBytes), new MessageSpool(spool), { maxMessageBytes: 8 * MiB, spoolAboveBytes: MiB, maxSpooledBytes });
  return { intake, files: () => readdirSync(spool) };
};

const receive = async (intake: MessageIntake, bytes: Buffer, chunk = 64 * 1024) => {
  const sink = intake.open();
  for (let at = 0; at < bytes.length; at += chunk) {
    sink.write(bytes.subarray(at, at + chunk));
    await sink.drain();
  }
  return sink.end();
};

const pattern = (bytes: number, seed: number): Buffer => Buffer.from(Array.from({ length: bytes }, (_, i) => (i * seed + (i >> 8)) % 251));

const throwing = (work: () => unknown): unknown => {
  try {
    work();
  } catch (error) {
    return error;
  }
  return undefined;
};

/** Polls for what happens after a step (a file's removal runs after the step resolves). */
const until = async (condition: () => boolean, what: string): Promise<void> => {
  for (let tries = 0; !condition(); tries += 1) {
    if (tries > 200) throw new Error(`never: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

const settled = async (promise: Promise<unknown>): Promise<boolean> => {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setTimeout(resolve, 50));
  return done;
};

t.test('the budget: waiting takes in turn, small takes never pass the oldest waiting one', async (t) => {
  const budget = new BodyBudget(100);
  t.ok(budget.tryTake(60));
  const big = budget.take(70);
  t.notOk(await settled(big), 'a take that does not fit waits');
  t.notOk(budget.tryTake(10), 'a small one may not use what the waiting one needs');
  budget.give(60);
  t.ok(await settled(big), 'granted once there is room');
  t.ok(budget.tryTake(30));
  budget.give(100);
  const huge = budget.take(500);
  t.ok(await settled(huge), 'a take larger than the whole budget goes when nothing else is held');
  t.equal(budget.heldBytes, 500);
});

t.test('a small message stays in memory; a large one goes to the spool and back', async (t) => {
  const { intake, files } = intakeIn(t.testdir({}), 16 * MiB);
  const small = pattern(200_000, 7);
  const received = await receive(intake, small);
  t.same(files(), [], 'no file for a small message');
  t.equal(intake.budget.heldBytes, small.length, 'its bytes are held in the budget as they arrive');
  const loaded = await received.load(100);
  t.ok(loaded.equals(small), 'the same bytes');
  t.equal(loaded.byteOffset - 100 >= 0 && loaded.buffer.byteLength >= loaded.length + 100, true, 'with room before them');
  received.release();
  t.equal(intake.budget.heldBytes, 0, 'given back');

  const large = pattern(3 * MiB, 13);
  const spooled = await receive(intake, large);
  t.equal(files().length, 1, 'a file for a large message');
  t.equal(intake.budget.heldBytes, 0, 'and nothing held in memory while it waits');
  const bytes = await spooled.load();
  t.ok(bytes.equals(large), 'read back whole');
  t.ok(bytes.buffer instanceof SharedArrayBuffer, 'in memory the parse worker shares');
  t.same(files(), [], 'the file is removed once it is read');
  spooled.release();
  const again = await receive(intake, pattern(2 * MiB, 3));
  const reused = await again.load();
  t.equal(reused.buffer, bytes.buffer, 'the next large message reuses its memory');
  again.release();
  t.equal(intake.budget.heldBytes, 0);
  t.equal(intake.spooledBytes, 0);
});

t.test('a spent budget: a small message goes to the spool, and loads in its turn', async (t) => {
  const { intake, files } = intakeIn(t.testdir({}), MiB);
  t.ok(intake.budget.tryTake(MiB), 'everything held elsewhere');
  const message = pattern(100_000, 5);
  const received = await receive(intake, message);
  t.equal(files().length, 1, 'spooled, not held in memory');
  const loading = received.load();
  t.notOk(await settled(loading), 'waits for the budget');
  intake.budget.give(MiB);
  t.ok((await loading).equals(message), 'loaded once there is room');
  received.release();
  t.equal(intake.budget.heldBytes, 0);
});

t.test('a full spool refuses: a message as it grows, an announced one at once; nothing stays held', async (t) => {
  const { intake, files } = intakeIn(t.testdir({}), MiB, 2 * MiB);
  const first = await receive(intake, pattern(1.5 * MiB, 3));
  t.type(await receive(intake, pattern(1.5 * MiB, 5)).catch((error) => error), IntakeFull, 'the second one does not fit beside the first');
  await until(() => files().length === 1, 'its file is removed');
  t.type(
    throwing(() => intake.open(1.5 * MiB)),
    IntakeFull,
    'an announced size that does not fit is refused before its bytes',
  );
  first.release();
  t.equal(intake.spooledBytes, 0);
  const retried = await receive(intake, pattern(1.5 * MiB, 5));
  t.equal(retried.size, 1.5 * MiB, 'once the first is gone, the retry fits');
  retried.release();
  await until(() => files().length === 0, 'every file is removed');
});

const largeMessage = (to: string, subject: string, bytes: number): Buffer => {
  const line = `${'x'.repeat(74)}\r\n`;
  return Buffer.from(
    `From: <s@remote.test>\r\nTo: <${to}>\r\nSubject: ${subject}\r\nMessage-ID: <${subject}@remote.test>\r\n\r\n${line.repeat(Math.ceil(bytes / line.length))}`,
  );
};

t.test('MX and IMAP: a full spool answers 452 4.3.1 and NO [LIMIT]; the retries land once it drains', async (t) => {
  const app = await startApp(t, { smtp: { maxBufferedMessageBytes: 4 * MiB, maxSpooledMessageBytes: 3 * MiB } });
  const agent = await app.register();
  const budget = app.app.messageIntake.budget;
  // Other messages hold the whole budget: the next large one waits in the spool for its turn.
  t.ok(budget.tryTake(4 * MiB));
  const waiting = smtpSendRaw(app.smtpPort, 's@remote.test', [agent.email], largeMessage(agent.email, 'waiting', 2 * MiB));
  while (app.app.messageIntake.spooledBytes < 2 * MiB) await new Promise((resolve) => setTimeout(resolve, 10));
  t.notOk(await settled(waiting), 'no answer while it waits for the budget');

  const refused = await smtpSendRaw(app.smtpPort, 's@remote.test', [agent.email], largeMessage(agent.email, 'refused', 2 * MiB)).catch((error) => error);
  t.match(refused, { responseCode: 452, response: /^452 4\.3\.1 / }, 'the spool has no room: 452 4.3.1, try again later');
  const imap = await imapLogin(t, app.imapPort, agent.email, agent.apiKey);
  const appendRefused = await imap.append('INBOX', largeMessage(agent.email, 'appended', 2 * MiB)).catch((error) => error);
  t.match(appendRefused, { responseStatus: 'NO', serverResponseCode: 'LIMIT' }, 'APPEND: NO [LIMIT], before the message is sent');

  budget.give(4 * MiB);
  t.match((await waiting).response, /^250 /, 'the waiting one is stored once the budget has room');
  t.match(
    (await smtpSendRaw(app.smtpPort, 's@remote.test', [agent.email], largeMessage(agent.email, 'refused', 2 * MiB))).response,
    /^250 /,
    'the retry lands',
  );
  t.ok(await imap.append('INBOX', largeMessage(agent.email, 'appended', 2 * MiB)), 'and the APPEND retried');
  const list = await app.api('GET', '/api/v1/agent/inbox?limit=10', { key: agent.apiKey });
  t.same(list.body.emails.map((email: { subject: string }) => email.subject).sort(), ['appended', 'refused', 'waiting']);
  t.equal(budget.heldBytes, 0, 'nothing held once all is stored');
  t.equal(app.app.messageIntake.spooledBytes, 0, 'nothing left in the spool');
});

t.test('IMAP: no APPEND message is read before LOGIN', async (t) => {
  const app = await startApp(t);
  const imap = await rawImap(t, app.imapPort);
  imap.send('a APPEND INBOX {200000}\r\n');
  t.match(await imap.read(/^a /m), /^a BAD log in first/m, 'a synchronizing literal: refused, no "+"');
  imap.send(`b APPEND INBOX {200000+}\r\n${'x'.repeat(200_000)}\r\nc NOOP\r\n`);
  const after = await imap.read(/^c /m);
  t.match(after, /^b BAD log in first/m, 'a non-synchronizing one: read past, then refused');
  t.match(after, /^c OK/m, 'and the connection goes on');
  t.equal(app.app.messageIntake.budget.heldBytes, 0);
  t.equal(app.app.messageIntake.spooledBytes, 0);
});
