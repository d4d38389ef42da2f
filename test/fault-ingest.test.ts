// Fault suite, ingest: a real `agentpost serve` process takes mail from 16 SMTP sessions at
// once and is killed with SIGKILL mid-stream, five times, restarted each time. Every message
// answered 250 must be stored exactly once, nothing twice, and the database must pass
// PRAGMA integrity_check. 16 sessions are a burst: most messages are answered from the inbound
// queue (src/services/mail/inbound.ts), so each kill leaves some queued, delivered by the next
// start. Prints the rounds, the acknowledgements, what each kill left queued and the peak RSS.
import nodemailer from 'nodemailer';
import t from 'tap';
import { faultSeed, faultServer, integrityCheck, killHard, registerAgent, report, seededRandom, sleep, summary, withDatabase } from './helpers/fault.js';
import { inboundDrained } from './helpers/status.js';

t.setTimeout(600_000);

const ROUNDS = 5;
const SESSIONS = 16;
const MAILBOXES = 4;
/** Acknowledgements to wait for in a round before the kill timer starts. */
const WARM_UP_ACKS = 40;
const PEAK_LIMIT_MB = 300;

interface Round {
  acked: Set<string>;
  attempted: number;
  /** Messages in the inbound queue right after the kill: answered, not yet in their mailboxes. */
  queued: number;
}

const queuedRows = (dbPath: string): number => withDatabase(dbPath, (db) => db.prepare('SELECT count(*) AS n FROM inbound_queue').get() as { n: number }).n;

/** 16 sessions, each one SMTP connection sending message after message until the server dies. */
const ingest = (smtpPort: number, mailboxes: string[], round: number, acked: Set<string>, stop: () => boolean) =>
  Array.from({ length: SESSIONS }, async (_, session) => {
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port: smtpPort,
      secure: false,
      ignoreTLS: true,
      pool: true,
      maxConnections: 1,
      maxMessages: Infinity,
    });
    let attempted = 0;
    try {
      for (let n = 0; !stop(); n += 1) {
        const messageId = `<r${round}.s${session}.m${n}@fault.test>`;
        attempted += 1;
        await transport.sendMail({
          envelope: { from: `sender${session}@remote.test`, to: [mailboxes[session % MAILBOXES]] },
          from: `sender${session}@remote.test`,
          to: mailboxes[session % MAILBOXES],
          subject: `round ${round} session ${session} #${n}`,
          messageId,
          text: `message ${n} of session ${session}\n`.repeat(40),
        });
        acked.add(messageId);
      }
    } catch {
      // the server was killed: this session's in-flight message has no answer
    } finally {
      transport.close();
    }
    return attempted;
  });

t.test(`kill -9 during 16-session ingest, ${ROUNDS} times: every 250 stored exactly once`, async (t) => {
  const seed = faultSeed();
  const random = seededRandom(seed);
  const fault = faultServer(t, { smtp: { greetingDelayMs: 0 } });
  const started = Date.now();
  let server = await fault.start();
  const mailboxes: string[] = [];
  for (let i = 0; i < MAILBOXES; i += 1) mailboxes.push((await registerAgent(server.baseUrl, `ingest${i}`, `10.1.0.${i + 1}`)).email);
  const rounds: Round[] = [];
  const peaks: (number | null)[] = [];
  for (let round = 1; round <= ROUNDS; round += 1) {
    if (round > 1) server = await fault.start();
    const acked = new Set<string>();
    let killed = false;
    const sessions = ingest(server.ports.smtp, mailboxes, round, acked, () => killed);
    while (acked.size < WARM_UP_ACKS && !killed) await sleep(5);
    await sleep(Math.floor(random() * 400));
    killed = true;
    peaks.push(await killHard(server));
    const attempted = (await Promise.all(sessions)).reduce((sum, count) => sum + count, 0);
    rounds.push({ acked, attempted, queued: queuedRows(fault.dbPath) });
  }
  // The fifth kill's database starts and serves again, and delivers what the kill left queued.
  server = await fault.start();
  const health = await fetch(`${server.baseUrl}/healthz`);
  await inboundDrained(server.baseUrl);
  await server.stop();

  const { counts, integrity } = withDatabase(fault.dbPath, (db) => ({
    counts: new Map(
      (
        db
          .prepare(
            `SELECT m.message_id AS id, count(*) AS n FROM messages m JOIN folders f ON f.id = m.folder_id
       WHERE f.name = 'INBOX' AND m.message_id LIKE '%@fault.test>' GROUP BY m.message_id`,
          )
          .all() as { id: string; n: number }[]
      ).map((row) => [row.id, row.n]),
    ),
    integrity: integrityCheck(db),
  }));
  t.equal(integrity, 'ok', 'PRAGMA integrity_check after the last kill');
  const acked = new Set(rounds.flatMap((round) => [...round.acked]));
  const lost = [...acked].filter((id) => counts.get(id) === undefined);
  const twice = [...counts].filter(([, n]) => n > 1);
  t.same(lost, [], 'every message answered 250 is stored');
  t.same(twice, [], 'no message is stored twice');
  t.ok(
    rounds.some((round) => round.queued > 0),
    'some kill left answered mail in the inbound queue (the restarts delivered it, counted above)',
  );
  t.equal(queuedRows(fault.dbPath), 0, 'the inbound queue is empty after the start that delivered it');
  const storedUnacked = [...counts.keys()].filter((id) => !acked.has(id)).length;
  t.equal(health.status, 200, 'restarts after the last kill');
  for (const peak of peaks) t.ok(peak !== null && peak < PEAK_LIMIT_MB, `peak RSS ${peak} MB < ${PEAK_LIMIT_MB} MB`);
  report(
    t,
    `fault ingest (seed ${seed}): ${ROUNDS} kill -9 rounds of ${SESSIONS} sessions in ${((Date.now() - started) / 1000).toFixed(1)} s; ` +
      `250s per round ${rounds.map((r) => r.acked.size).join(', ')} (attempted ${rounds.map((r) => r.attempted).join(', ')}; ` +
      `queued at the kill ${rounds.map((r) => r.queued).join(', ')}); ` +
      `stored ${counts.size} (${storedUnacked} committed but cut off before their 250); peak RSS MB per round ${summary(peaks)}`,
  );
});
