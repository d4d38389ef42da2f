// The inbox list starts deep pages at rank samples (src/store/rank-samples.ts). With a sample
// every 4 messages, random appends, copies in, moves out and expunges run through the services;
// after each, pages at random limits and offsets (and at the edges) are compared with the plain
// OFFSET query over the folder, and every sample with its definition.
import fc from 'fast-check';
import t, { type Test } from 'tap';
import { startApp } from './helpers/app.js';
import { plainParsed, plainRaw } from './helpers/mail.js';

const SPACING = 4;

type Step =
  | { kind: 'append'; count: number }
  | { kind: 'copy-in'; picks: number[] }
  | { kind: 'move-out'; picks: number[] }
  | { kind: 'expunge'; picks: number[] };

const picks = fc.array(fc.nat(), { minLength: 1, maxLength: 12 });
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 1, max: 14 }).map((count) => ({ kind: 'append' as const, count })) },
  { weight: 1, arbitrary: picks.map((p) => ({ kind: 'copy-in' as const, picks: p })) },
  { weight: 1, arbitrary: picks.map((p) => ({ kind: 'move-out' as const, picks: p })) },
  { weight: 2, arbitrary: picks.map((p) => ({ kind: 'expunge' as const, picks: p })) },
);
/** The app with a sample every SPACING messages, and one agent's principal and mailbox. */
const agentApp = async (t: Test) => {
  const { app, register } = await startApp(t, {}, { rankSampleSpacing: SPACING });
  const agent = await register();
  const mailbox = await app.services.mailbox.mailboxForAddress(agent.email);
  if (!mailbox) throw new Error('no mailbox');
  return { app, principal: await app.services.auth.authenticate(agent.apiKey), mailbox };
};

const page = fc.record({ limit: fc.integer({ min: 1, max: 25 }), offset: fc.nat({ max: 120 }) });

t.test('every page agrees with the plain query through random appends, copies, moves and expunges', async (t) => {
  const { app, principal, mailbox } = await agentApp(t);
  const { db } = app.store;
  const plain = db.prepare('SELECT uid FROM messages WHERE folder_id = ? ORDER BY uid DESC LIMIT ? OFFSET ?').pluck();
  const uidsOf = (folderId: number) => db.prepare('SELECT uid FROM messages WHERE folder_id = ? ORDER BY uid').pluck().all(folderId) as number[];
  const samplesOf = (folderId: number) =>
    db.prepare('SELECT uid, below FROM folder_rank_samples WHERE folder_id = ? ORDER BY uid').all(folderId) as { uid: number; below: number }[];
  const append = async (folder: string, count: number) =>
    await app.store.transaction(async () => {
      for (let i = 0; i < count; i += 1) await app.services.mailbox.append(mailbox, folder, plainRaw('m', 'text'), plainParsed('m', 'text'));
    });
  const chosen = (uids: number[], indexes: number[]) => (uids.length === 0 ? [] : indexes.map((i) => uids[i % uids.length]));

  const checkPage = async (name: string, folderId: number, limit: number, offset: number) => {
    const listed = await app.services.mailbox.list(principal, { folder: name, limit, offset });
    const expected = plain.all(folderId, limit, offset) as number[];
    const got = listed.emails.map((email) => Number(email.id));
    const total = uidsOf(folderId).length;
    if (got.join(' ') !== expected.join(' ') || listed.totalMessages !== total) {
      throw new Error(`limit ${limit} offset ${offset}: [${got}] of ${listed.totalMessages} instead of [${expected}] of ${total}`);
    }
  };

  /**
   * A sample counts the messages below its UID; no stretch between samples (and the folder's
   * start and end) holds more than SPACING, and no sample could go with both of its stretches
   * together still within SPACING (so there are at most about 2 * count / SPACING of them).
   */
  const checkSamples = (folderId: number) => {
    const uids = uidsOf(folderId);
    const samples = samplesOf(folderId);
    const bounds = [0, ...samples.map((sample) => sample.below), uids.length];
    samples.forEach((sample, i) => {
      const below = uids.filter((uid) => uid < sample.uid).length;
      if (sample.below !== below) throw new Error(`sample at UID ${sample.uid} counts ${sample.below} below it, not ${below}`);
      if (bounds[i + 2] - bounds[i] <= SPACING) throw new Error(`sample at UID ${sample.uid} is needless: [${bounds}]`);
    });
    bounds.slice(1).forEach((bound, i) => {
      if (bound - bounds[i] > SPACING) throw new Error(`${bound - bounds[i]} messages between samples: [${bounds}]`);
    });
  };

  let run = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(fc.tuple(step, fc.array(page, { minLength: 1, maxLength: 4 })), { minLength: 1, maxLength: 20 }), async (steps) => {
      run += 1;
      const name = `Run${run}`;
      const folder = await app.services.folders.create(mailbox, name);
      await append('Sent', 3);
      for (const [change, pages] of steps) {
        const uids = uidsOf(folder.id);
        if (change.kind === 'append') await append(name, change.count);
        if (change.kind === 'expunge') await app.services.messageOps.expunge(mailbox, folder, chosen(uids, change.picks));
        if (change.kind === 'move-out')
          await app.services.messageOps.move(mailbox, folder, chosen(uids, change.picks), await app.services.mailbox.folder(mailbox.id, 'Sent'));
        if (change.kind === 'copy-in') {
          const sent = await app.services.mailbox.folder(mailbox.id, 'Sent');
          await app.services.messageOps.copy(mailbox, sent, chosen(uidsOf(sent.id), change.picks), folder);
        }
        checkSamples(folder.id);
        const count = uidsOf(folder.id).length;
        for (const { limit, offset } of pages) await checkPage(name, folder.id, limit, offset);
        for (const offset of [0, count - 1, count, Math.max(0, count - 5), count + 1]) await checkPage(name, folder.id, 5, offset);
      }
      // A deleted folder takes its samples with it; a folder made again under the name starts without.
      await app.services.folders.delete(mailbox, name);
      if (samplesOf(folder.id).length !== 0) throw new Error('a deleted folder kept its rank samples');
    }),
    { seed: 1414, numRuns: 60 },
  );
  t.pass('60 random histories paged as the plain query pages them');
});

t.test('a page reaches the oldest message across the folder start and past the end, empty folder too', async (t) => {
  const { app, principal, mailbox } = await agentApp(t);
  const list = async (limit: number, offset: number) => {
    const listed = await app.services.mailbox.list(principal, { folder: 'INBOX', limit, offset });
    return { total: listed.totalMessages, ids: listed.emails.map((email) => Number(email.id)) };
  };
  t.same(await list(10, 0), { total: 0, ids: [] }, 'an empty folder');
  await app.store.transaction(async () => {
    for (let i = 0; i < 30; i += 1) await app.services.mailbox.append(mailbox, 'INBOX', plainRaw('m', 'text'), plainParsed('m', 'text'));
  });
  t.same(await list(10, 25), { total: 30, ids: [5, 4, 3, 2, 1] }, 'a limit that crosses the start ends at the oldest');
  t.same(await list(10, 18), { total: 30, ids: [12, 11, 10, 9, 8, 7, 6, 5, 4, 3] }, 'a deep page between samples');
  t.same(await list(10, 30), { total: 30, ids: [] }, 'an offset at the end');
  t.same(await list(10, Number.MAX_SAFE_INTEGER), { total: 30, ids: [] }, 'an offset far past the end');
});
