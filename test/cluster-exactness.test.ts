// Two `agentpost serve` processes on one data folder (docs/design.md, "Several processes:
// wake-ups and exactness"): what one process decided from a read of its own stays exact when
// two decide at once. UIDs stay dense and in order under APPENDs and deliveries through both,
// concurrent sends through both never pass the credits or the daily cap, and of two CONDSTORE
// STOREs with one UNCHANGEDSINCE exactly one changes the message.
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t, { type Test } from 'tap';
import { startCluster } from './helpers/cluster.js';
import { imapLogin, rawImap } from './helpers/imap.js';
import { restCall } from './helpers/process.js';
import { smtpSend } from './helpers/smtp.js';

// Two processes on a loaded 2-core machine.
t.setTimeout(600_000);

const CRLF = '\r\n';

interface Agent {
  email: string;
  apiKey: string;
}

const register = async (baseUrl: string, agentId: string): Promise<Agent> =>
  (await restCall(baseUrl, 'POST', '/api/v1/agent/register', { body: { agentId } })).body as Agent;

/** The UIDs and mod-sequences of a mailbox's INBOX, in UID order, read from the shared database. */
const inboxOf = (dataDir: string, email: string): { uid: number; modseq: number }[] => {
  const db = new Database(join(dataDir, 'agentpost.db'), { readonly: true });
  try {
    return db
      .prepare(
        `SELECT m.uid, m.modseq FROM messages m JOIN folders f ON f.id = m.folder_id JOIN mailboxes b ON b.id = f.mailbox_id
         WHERE b.address = ? AND f.name = 'INBOX' ORDER BY m.uid`,
      )
      .all(email) as { uid: number; modseq: number }[];
  } finally {
    db.close();
  }
};

/** Two processes on one new data folder, with the config file beside it. */
const cluster = (t: Test) => {
  const dir = t.testdir({
    'agentpost.json': JSON.stringify({
      // Every message into its mailbox before its 250 (the inbound queue's drain is not yet claimed per process).
      smtp: { queue: { maxMessages: 0 } },
      limits: { sendingStates: { probation: { recipientsPerDay: 8, recipientsPerMinute: 100 } } },
    }),
  });
  return startCluster(t, { nodes: 2, dataDir: join(dir, 'data'), env: { AGENTPOST_CONFIG: join(dir, 'agentpost.json') } });
};

t.test('APPENDs and deliveries through both processes at once: UIDs dense, mod-sequences rising', async (t) => {
  const { nodes, dataDir } = await cluster(t);
  const agent = await register(nodes[0].baseUrl, 'uids.test');
  const PER_WAY = 12;
  const appends = nodes.map(async (node, which) => {
    const client = await imapLogin(t, node.imapPort, agent.email, agent.apiKey);
    for (let index = 0; index < PER_WAY; index += 1) {
      await client.append('INBOX', `From: a@example.com\r\nTo: ${agent.email}\r\nSubject: append ${which}-${index}\r\n\r\nbody\r\n`);
    }
  });
  const deliveries = nodes.flatMap((node, which) =>
    Array.from({ length: PER_WAY }, (_, index) =>
      smtpSend(node.smtpPort, { from: 'sender@example.com', to: agent.email, subject: `smtp ${which}-${index}`, text: 'x' }),
    ),
  );
  await Promise.all([...appends, ...deliveries]);
  const stored = inboxOf(dataDir, agent.email);
  const total = 4 * PER_WAY;
  t.same(
    stored.map((row) => row.uid),
    Array.from({ length: total }, (_, index) => index + 1),
    'UIDs 1 to n, none skipped or repeated',
  );
  t.ok(
    stored.every((row, index) => index === 0 || row.modseq > stored[index - 1].modseq),
    'each message a higher mod-sequence than the one before it',
  );
});

t.test('sends through both processes at once never overspend credits nor pass the daily cap', async (t) => {
  const { nodes, dataDir, cli } = await cluster(t);
  const sender = await register(nodes[0].baseUrl, 'cap.sender');
  const recipient = await register(nodes[1].baseUrl, 'cap.recipient');
  const burst = (round: number) =>
    Promise.all(
      Array.from({ length: 16 }, (_, index) =>
        restCall(nodes[index % 2].baseUrl, 'POST', '/api/v1/agent/send', {
          key: sender.apiKey,
          body: { to: recipient.email, subject: `round ${round} send ${index}`, text: 'x' },
        }),
      ),
    );
  const balance = async () => (await restCall(nodes[1].baseUrl, 'GET', '/api/v1/agent/balance', { key: sender.apiKey })).body.credits as number;

  await cli('credits', 'add', sender.email, '5');
  const first = await burst(1);
  t.equal(first.filter((answer) => answer.status === 200).length, 5, 'five credits: five of sixteen sends accepted');
  t.same(new Set(first.filter((answer) => answer.status !== 200).map((answer) => answer.body.code)), new Set(['insufficient_credits']));
  t.equal(await balance(), 0, 'no credit spent twice');

  await cli('credits', 'add', sender.email, '10');
  const second = await burst(2);
  t.equal(second.filter((answer) => answer.status === 200).length, 3, 'the daily cap of 8: three more accepted');
  t.same(new Set(second.filter((answer) => answer.status !== 200).map((answer) => answer.status)), new Set([429]));
  t.equal(await balance(), 7);
  const sending = await restCall(nodes[0].baseUrl, 'GET', '/api/v1/agent/sending', { key: sender.apiKey });
  t.equal(sending.body.usage.recipientsToday, 8);
  t.equal(inboxOf(dataDir, recipient.email).length, 8, 'eight messages delivered');
});

t.test('CONDSTORE: of two STOREs with one UNCHANGEDSINCE through two processes, exactly one changes the message', async (t) => {
  const { nodes } = await cluster(t);
  const agent = await register(nodes[0].baseUrl, 'condstore.test');
  await smtpSend(nodes[0].smtpPort, { from: 'sender@example.com', to: agent.email, subject: 'flagged twice', text: 'x' });
  const sessions = await Promise.all(
    nodes.map(async (node, which) => {
      const raw = await rawImap(t, node.imapPort);
      raw.send(`${which}l LOGIN ${agent.email} ${agent.apiKey}${CRLF}${which}e ENABLE CONDSTORE${CRLF}${which}s SELECT INBOX${CRLF}`);
      await raw.read(new RegExp(`^${which}s OK`, 'm'));
      return raw;
    }),
  );
  const ROUNDS = 12;
  const winners: string[] = [];
  for (let round = 1; round <= ROUNDS; round += 1) {
    sessions[0].send(`f${round} UID FETCH 1 (MODSEQ)${CRLF}`);
    const modseq = Number(/MODSEQ \((\d+)\)/.exec(await sessions[0].read(new RegExp(`^f${round} OK`, 'm')))?.[1]);
    sessions.forEach((raw, which) => raw.send(`s${round} UID STORE 1 (UNCHANGEDSINCE ${modseq}) +FLAGS.SILENT (k${which}r${round})${CRLF}`));
    const answers = await Promise.all(sessions.map((raw) => raw.read(new RegExp(`^s${round} `, 'm'))));
    const changed = answers.map((answer) => !/^s\d+ OK \[MODIFIED 1\]/m.test(answer));
    t.equal(changed.filter(Boolean).length, 1, `round ${round}: one STORE changed the message, the other answered MODIFIED`);
    changed.forEach((won, which) => won && winners.push(`k${which}r${round}`));
  }
  sessions[1].send(`z UID FETCH 1 (FLAGS)${CRLF}`);
  const flags = /FLAGS \(([^)]*)\)/.exec(await sessions[1].read(/^z OK/m))?.[1].split(' ') ?? [];
  t.same(flags.filter((flag) => /^k\dr\d+$/.test(flag)).sort(), [...winners].sort(), 'the message has exactly the winners’ keywords');
});
