// UID SEARCH with ranges, flags, FROM and SUBJECT, which SQL narrows before any row is read
// (src/store/imap.ts uidsNarrowed): random conjunctions over a small mailbox, each answer
// compared with a model of RFC 3501 section 6.4.4 written here from the messages appended.
import fc from 'fast-check';
import t from 'tap';
import { startApp } from './helpers/app.js';
import { imapLogin, rawImap } from './helpers/imap.js';

const DAY = 86_400_000;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const imapDate = (ms: number) => {
  const d = new Date(ms);
  return `${d.getUTCDate()}-${MONTHS[d.getUTCMonth()]}-${d.getUTCFullYear()}`;
};

interface Model {
  uid: number;
  received: number;
  sent: number | null;
  size: number;
  flags: Set<string>;
  from: string;
  subject: string;
}

const NAMES = ['Ann Lee', 'Bob Stone', 'Carla Diaz', 'Dan_Ek'];
const SUBJECTS = ['Quarterly report', 're: lunch?', 'Invoice 100%', 'hello WORLD', ''];
const FLAGS = ['\\Seen', '\\Flagged', '\\Answered'];
const BASE = Date.UTC(2026, 2, 1);

t.test('SEARCH answers as the model does for random conjunctions of narrowed keys', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  const client = await imapLogin(t, app.imapPort, agent.email, agent.apiKey);
  const model: Model[] = [];
  for (let i = 0; i < 24; i += 1) {
    const name = NAMES[i % NAMES.length];
    const email = `${name.split(' ')[0].toLowerCase()}@example.org`;
    const subject = SUBJECTS[i % SUBJECTS.length];
    const sent = i % 7 === 3 ? null : BASE + (i % 5) * DAY + 3_600_000 * (i % 13);
    const raw = Buffer.from(
      `From: ${name} <${email}>\r\nTo: x@example.org\r\nSubject: ${subject}\r\n${sent === null ? '' : `Date: ${new Date(sent).toUTCString()}\r\n`}Message-ID: <m${i}@example.org>\r\n\r\n${'body '.repeat(i * 7)}\r\n`,
    );
    const flags = FLAGS.filter((_, f) => (i >> f) % 2 === 1);
    const received = BASE + ((i * 3) % 8) * DAY + 60_000 * i;
    const appended = await client.append('INBOX', raw, flags, new Date(received));
    if (!appended) throw new Error('APPEND failed');
    model.push({ uid: Number(appended.uid), received, sent, size: raw.length, flags: new Set(flags), from: `${name} <${email}>`, subject });
  }
  await client.logout();

  const imap = await rawImap(t, app.imapPort);
  let tag = 0;
  const command = async (line: string) => {
    tag += 1;
    imap.send(`t${tag} ${line}\r\n`);
    return imap.read(new RegExp(`^t${tag} .*\\r\\n`, 'm'));
  };
  await command(`LOGIN ${agent.email} ${agent.apiKey}`);
  await command('SELECT INBOX');

  const dayOf = (ms: number) => Math.floor(ms / DAY) * DAY;
  const day = fc.integer({ min: -1, max: 9 }).map((n) => BASE + n * DAY);
  type Key = { text: string; test: (m: Model) => boolean };
  const contains = (hay: string, needle: string) => hay.toLowerCase().includes(needle.toLowerCase());
  const key: fc.Arbitrary<Key> = fc.oneof(
    day.map((d) => ({ text: `SINCE ${imapDate(d)}`, test: (m: Model) => dayOf(m.received) >= d })),
    day.map((d) => ({ text: `BEFORE ${imapDate(d)}`, test: (m: Model) => dayOf(m.received) < d })),
    day.map((d) => ({ text: `ON ${imapDate(d)}`, test: (m: Model) => dayOf(m.received) === d })),
    day.map((d) => ({ text: `SENTSINCE ${imapDate(d)}`, test: (m: Model) => m.sent !== null && dayOf(m.sent) >= d })),
    day.map((d) => ({ text: `SENTBEFORE ${imapDate(d)}`, test: (m: Model) => m.sent !== null && dayOf(m.sent) < d })),
    day.map((d) => ({ text: `SENTON ${imapDate(d)}`, test: (m: Model) => m.sent !== null && dayOf(m.sent) === d })),
    fc.integer({ min: 100, max: 1000 }).map((n) => ({ text: `LARGER ${n}`, test: (m: Model) => m.size > n })),
    fc.integer({ min: 100, max: 1000 }).map((n) => ({ text: `SMALLER ${n}`, test: (m: Model) => m.size < n })),
    fc.constantFrom(...FLAGS).map((f) => ({ text: f.slice(1).toUpperCase(), test: (m: Model) => m.flags.has(f) })),
    fc.constantFrom(...FLAGS).map((f) => ({ text: `UN${f.slice(1).toUpperCase()}`, test: (m: Model) => !m.flags.has(f) })),
    fc.constantFrom(...FLAGS).map((f) => ({ text: `NOT ${f.slice(1).toUpperCase()}`, test: (m: Model) => !m.flags.has(f) })),
    fc
      .constantFrom('ann', 'STONE', 'n L', 'Lee <ann', 'e@example', 'dan_', 'b', '%', 'Bob ', 'carla@')
      .map((s) => ({ text: `FROM "${s}"`, test: (m: Model) => contains(m.from, s) })),
    fc
      .constantFrom('report', 'RE:', '100%', 'o w', 'lunch?', 'nothing', '_')
      .map((s) => ({ text: `SUBJECT "${s}"`, test: (m: Model) => contains(m.subject, s) })),
    fc.constant({ text: 'ALL', test: () => true }),
    fc.constant({ text: 'OR SEEN FLAGGED', test: (m: Model) => m.flags.has('\\Seen') || m.flags.has('\\Flagged') }),
  );
  await fc.assert(
    fc.asyncProperty(fc.array(key, { minLength: 1, maxLength: 4 }), async (keys) => {
      const answer = await command(`UID SEARCH ${keys.map((k) => k.text).join(' ')}`);
      const found = (answer.match(/^\* SEARCH([^\r]*)\r\n/m)?.[1] ?? '').trim().split(' ').filter(Boolean).map(Number);
      const expected = model.filter((m) => keys.every((k) => k.test(m))).map((m) => m.uid);
      if (found.join(' ') !== expected.join(' '))
        throw new Error(`UID SEARCH ${keys.map((k) => k.text).join(' ')}: ${found.join(' ')} instead of ${expected.join(' ')}`);
    }),
    { seed: 5281, numRuns: 300 },
  );
  t.pass('300 searches answered as the model does');
});
