// Fault suite, sending: a real `agentpost serve` process accepts sends over REST and hands
// them to a relay that answers each message late; it is killed with SIGKILL mid-stream, five
// times, restarted each time, then left to drain. Every accepted send is delivered once or
// still queued, `unresolved` only if its message data was sent; credits equal grants minus
// charges plus refunds; PRAGMA integrity_check passes. Prints what it did and the peak RSS.
import t from 'tap';
import { faultSeed, faultServer, integrityCheck, killHard, registerAgent, report, seededRandom, sleep, summary, withDatabase } from './helpers/fault.js';
import { startRelaySink } from './helpers/relay-sink.js';

t.setTimeout(600_000);

const ROUNDS = 5;
const SENDERS = 2;
/** Send loops per sender account. */
const LOOPS = 2;
const GRANT = 5_000;
/** Sends to wait for in a round before the kill timer starts. */
const WARM_UP_SENDS = 60;
const PEAK_LIMIT_MB = 300;
const UNLIMITED = { recipientsPerDay: 1_000_000, recipientsPerMinute: 1_000_000 };

interface Accepted {
  id: string;
  account: string;
  recipients: string[];
}

interface RecipientRow {
  address: string;
  status: string;
}

/** One loop per sender: a send with 1 to 3 fresh recipients after another, until the server dies. */
const sendLoop = async (baseUrl: string, apiKey: string, account: string, tag: string, random: () => number, accepted: Accepted[], stop: () => boolean) => {
  for (let n = 0; !stop(); n += 1) {
    const recipients = Array.from({ length: 1 + Math.floor(random() * 3) }, (_, k) => `${tag}-${n}-${k}@remote.test`);
    try {
      const response = await fetch(`${baseUrl}/api/v1/agent/send`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
        body: JSON.stringify({ to: recipients, subject: `${tag} #${n}`, text: 'x'.repeat(2_000) }),
      });
      const body = await response.json();
      if (response.status === 200) accepted.push({ id: body.id, account, recipients });
    } catch {
      return; // the server was killed: this send has no answer
    }
  }
};

const readOutcome = (dbPath: string) =>
  withDatabase(dbPath, (db) => ({
    integrity: integrityCheck(db),
    recipients: new Map(
      (db.prepare('SELECT submission_id AS id, address, status FROM submission_recipients').all() as (RecipientRow & { id: string })[]).map((row) => [
        row.address,
        row,
      ]),
    ),
    credits: db
      .prepare(
        `SELECT a.email, a.credits,
       (SELECT count(*) FROM submission_recipients r WHERE r.account_id = a.id AND r.credit_reserved = 1) AS charged,
       (SELECT count(*) FROM submission_recipients r WHERE r.account_id = a.id AND r.refunded = 1) AS refunded
     FROM accounts a`,
      )
      .all() as { email: string; credits: number; charged: number; refunded: number }[],
    pending: (db.prepare(`SELECT count(*) AS n FROM submission_recipients WHERE status IN ('queued', 'deferred')`).get() as { n: number }).n,
  }));

t.test(`kill -9 during sending to a slow relay, ${ROUNDS} times: delivered once or queued, unresolved only after DATA`, async (t) => {
  const seed = faultSeed();
  const random = seededRandom(seed);
  const sink = await startRelaySink(t, () => 20 + Math.floor(random() * 80));
  const fault = faultServer(t, {
    outbound: { relay: `smtp://127.0.0.1:${sink.port}`, concurrency: 8, timeoutMs: 5_000 },
    limits: { sendRequestsPerMinute: 1_000_000, sendingStates: { probation: UNLIMITED, standard: UNLIMITED, reviewed: UNLIMITED } },
  });
  const started = Date.now();
  let server = await fault.start();
  const senders: { email: string; apiKey: string }[] = [];
  for (let i = 0; i < SENDERS; i += 1) senders.push(await registerAgent(server.baseUrl, `sender${i}`, `10.2.0.${i + 1}`));
  // Probation's limits are lifted in the config above, so the grant is the only admin step.
  await Promise.all(senders.map((sender) => fault.cli('credits', 'add', sender.email, String(GRANT))));
  const setUp = Date.now();
  const accepted: Accepted[] = [];
  const peaks: (number | null)[] = [];
  const perRound: number[] = [];
  for (let round = 1; round <= ROUNDS; round += 1) {
    if (round > 1) server = await fault.start();
    const before = accepted.length;
    let killed = false;
    const loops = senders.flatMap((sender, i) =>
      Array.from({ length: LOOPS }, (_, j) => sendLoop(server.baseUrl, sender.apiKey, sender.email, `r${round}s${i}l${j}`, random, accepted, () => killed)),
    );
    while (accepted.length - before < WARM_UP_SENDS) await sleep(5);
    await sleep(Math.floor(random() * 600));
    killed = true;
    peaks.push(await killHard(server));
    await Promise.all(loops);
    perRound.push(accepted.length - before);
  }
  const afterKills = readOutcome(fault.dbPath);
  t.equal(afterKills.integrity, 'ok', 'PRAGMA integrity_check after the last kill');

  // Restarted once more, the queue drains: what was claimed but never sent goes out now, once.
  const killsDone = Date.now();
  server = await fault.start();
  let outcome = readOutcome(fault.dbPath);
  for (let waited = 0; outcome.pending > 0 && waited < 60_000; waited += 200) {
    await sleep(200);
    outcome = readOutcome(fault.dbPath);
  }
  await server.stop();
  const drained = Date.now();
  outcome = readOutcome(fault.dbPath);
  t.equal(outcome.integrity, 'ok', 'PRAGMA integrity_check after draining');

  const problems: string[] = [];
  const statuses: Record<string, number> = {};
  for (const send of accepted) {
    for (const address of send.recipients) {
      const row = outcome.recipients.get(address);
      const accepts = sink.accepted.get(address) ?? 0;
      const began = sink.dataBegun.get(address) ?? 0;
      if (!row || row.id !== send.id) problems.push(`${address}: accepted send ${send.id} has no such recipient row`);
      const status = row?.status ?? 'missing';
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (accepts > 1) problems.push(`${address}: the relay accepted it ${accepts} times`);
      if (status === 'delivered' && accepts !== 1) problems.push(`${address}: delivered but accepted by the relay ${accepts} times`);
      if ((status === 'queued' || status === 'deferred') && accepts !== 0) problems.push(`${address}: ${status} but already accepted by the relay`);
      if (status === 'unresolved' && began === 0) problems.push(`${address}: unresolved but its message data was never sent`);
      if (!['delivered', 'queued', 'deferred', 'unresolved'].includes(status)) problems.push(`${address}: ${status}`);
    }
  }
  t.same(problems.slice(0, 20), [], `every accepted recipient: delivered once, still queued, or unresolved after DATA (${problems.length} problems)`);
  for (const account of outcome.credits.filter((row) => senders.some((sender) => sender.email === row.email))) {
    t.equal(account.credits, GRANT - account.charged + account.refunded, `${account.email}: credits = grants - charges + refunds`);
  }
  for (const peak of peaks) t.ok(peak !== null && peak < PEAK_LIMIT_MB, `peak RSS ${peak} MB < ${PEAK_LIMIT_MB} MB`);
  const seconds = (from: number, to: number) => ((to - from) / 1000).toFixed(1);
  report(
    t,
    `fault send (seed ${seed}): ${seconds(started, Date.now())} s (set-up ${seconds(started, setUp)}, ${ROUNDS} kill -9 rounds ${seconds(setUp, killsDone)}, drain ${seconds(killsDone, drained)}); sends accepted per round ${perRound.join(', ')}; ` +
      `recipients ${JSON.stringify(statuses)} after draining (pending right after the last kill: ${afterKills.pending}); ` +
      `relay DATA commands ${[...sink.dataBegun.values()].reduce((a, b) => a + b, 0)}, accepted ${[...sink.accepted.values()].reduce((a, b) => a + b, 0)}; peak RSS MB per round ${summary(peaks)}`,
  );
});
