import { dirname, join } from 'node:path';
import { ImapFlow } from 'imapflow';
import { benchIdOf, emptyOutcome, tally, type CorpusMessage, type Outcome } from './junk-corpus.js';
import { startAgentpost, type Agentpost } from './ingest-targets.js';
import { cpuMs } from './proc.js';
import { dataPayload, runLoad } from './smtp-load.js';

/**
 * agentpost in bench:junk: a server process of its own (its CPU read from /proc), one new
 * mailbox per fold (a fresh model), trained through the service's own training interface
 * (POST /api/v1/agent/email/{id}/junk on each training message delivered over SMTP), then the
 * fold's test messages delivered over SMTP: what went to Junk is what it called junk. A second
 * server with `junk.enabled` false takes the same test messages, so the filter's share of the
 * CPU is the difference.
 */
export interface AgentpostFold {
  outcome: Outcome;
  /** Server CPU per test message with the filter off (the same messages), ms. */
  cpuMsWithoutFilter: number;
  /** Test messages whose verdict says the filter failed (should be none). */
  failedVerdicts: number;
  /** The mailbox, for the in-process measurement of the scoring. */
  mailbox: { email: string; dataFile: string };
}

const SESSIONS = 4;
const JUDGES = 4;
const HEADERS = { 'content-type': 'application/json', 'user-agent': 'agentpost-bench/1.0' };

interface Mailbox {
  email: string;
  apiKey: string;
}

let registered = 0;
const register = async (server: Agentpost, agentId: string): Promise<Mailbox> => {
  registered += 1;
  const response = await fetch(`${server.baseUrl}/api/v1/agent/register`, {
    method: 'POST',
    body: JSON.stringify({ agentId }),
    headers: { ...HEADERS, 'x-forwarded-for': `10.77.${registered >> 8}.${registered & 255}` },
  });
  if (response.status !== 201) throw new Error(`register: ${response.status} ${await response.text()}`);
  return (await response.json()) as Mailbox;
};

/** UID -> X-Bench-Id of every message in a folder, read over IMAP (HEADER.FIELDS). */
const benchIds = async (server: Agentpost, mailbox: Mailbox, folder: string): Promise<Map<number, number>> => {
  const client = new ImapFlow({ host: '127.0.0.1', port: server.imapPort, secure: false, auth: { user: mailbox.email, pass: mailbox.apiKey }, logger: false });
  await client.connect();
  const ids = new Map<number, number>();
  try {
    const opened = await client.mailboxOpen(folder, { readOnly: true }).catch(() => null);
    if (opened && opened.exists > 0) {
      for await (const message of client.fetch('1:*', { uid: true, headers: ['x-bench-id'] })) {
        const id = benchIdOf(message.headers?.toString('latin1') ?? '');
        if (id !== null) ids.set(message.uid, id);
      }
    }
  } finally {
    await client.logout();
  }
  return ids;
};

const deliver = async (server: Agentpost, mailbox: Mailbox, messages: readonly CorpusMessage[]): Promise<number> => {
  const before = cpuMs(server.pid);
  await runLoad({ port: server.port, to: mailbox.email, payloads: messages.map((message) => dataPayload(message.raw)), sessions: SESSIONS, reuse: true });
  await server.drained();
  return cpuMs(server.pid) - before;
};

/** Judges every training message with POST /api/v1/agent/email/{id}/junk, JUDGES at a time. */
const train = async (server: Agentpost, mailbox: Mailbox, messages: readonly CorpusMessage[]): Promise<void> => {
  const byId = new Map(messages.map((message) => [message.id, message]));
  const queue = [...(await benchIds(server, mailbox, 'INBOX'))].filter(([, id]) => byId.has(id));
  if (queue.length !== messages.length) throw new Error(`${messages.length} training messages sent, ${queue.length} found in INBOX`);
  await Promise.all(
    Array.from({ length: JUDGES }, async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const [uid, id] = next;
        const response = await fetch(`${server.baseUrl}/api/v1/agent/email/${uid}/junk`, {
          method: 'POST',
          headers: { ...HEADERS, authorization: `Bearer ${mailbox.apiKey}` },
          body: JSON.stringify({ junk: byId.get(id)?.spam }),
        });
        const body = (await response.json()) as { trained?: boolean };
        if (response.status !== 200 || body.trained !== true) throw new Error(`judging ${uid}: ${response.status} ${JSON.stringify(body)}`);
      }
    }),
  );
};

/** Verdicts of a folder's messages by UID, through the REST list (100 a page). */
const verdicts = async (server: Agentpost, mailbox: Mailbox, folder: string): Promise<Map<number, { failed?: string }>> => {
  const found = new Map<number, { failed?: string }>();
  for (let offset = 0; ; offset += 100) {
    const response = await fetch(`${server.baseUrl}/api/v1/agent/inbox?folder=${folder}&limit=100&offset=${offset}`, {
      headers: { ...HEADERS, authorization: `Bearer ${mailbox.apiKey}` },
    });
    if (response.status !== 200) return found;
    const page = (await response.json()) as { emails: { id: string; junkVerdict?: { failed?: string } }[] };
    for (const email of page.emails) found.set(Number(email.id), email.junkVerdict ?? {});
    if (page.emails.length < 100) return found;
  }
};

export const startAgentpostJunk = async () => {
  const server = await startAgentpost('agentpost');
  const plain = await startAgentpost('agentpost, junk filter off', { config: { junk: { enabled: false } } });
  return {
    fold: async (fold: number, training: readonly CorpusMessage[], testing: readonly CorpusMessage[]): Promise<AgentpostFold> => {
      const mailbox = await register(server, `fold${fold}`);
      await deliver(server, mailbox, training);
      await train(server, mailbox, training);
      const outcome = emptyOutcome();
      outcome.cpuMs = await deliver(server, mailbox, testing);
      const labels = new Map(testing.map((message) => [message.id, message.spam]));
      let failedVerdicts = 0;
      for (const folder of ['INBOX', 'Junk']) {
        const stored = verdicts(server, mailbox, folder);
        for (const [uid, id] of await benchIds(server, mailbox, folder)) {
          const spam = labels.get(id);
          if (spam === undefined) continue;
          labels.delete(id);
          tally(outcome, spam, folder === 'Junk');
          if ((await stored).get(uid)?.failed) failedVerdicts += 1;
        }
      }
      if (labels.size > 0) throw new Error(`${labels.size} test messages not found in INBOX or Junk`);
      // The same mail before the measured test messages, so both servers are as warm and as full.
      const baseline = await register(plain, `fold${fold}`);
      await deliver(plain, baseline, training);
      const cpuMsWithoutFilter = (await deliver(plain, baseline, testing)) / testing.length;
      return { outcome, cpuMsWithoutFilter, failedVerdicts, mailbox: { email: mailbox.email, dataFile: join(dirname(server.configFile), 'agentpost.db') } };
    },
    stop: async () => {
      await Promise.all([server.stop(), plain.stop()]);
    },
  };
};
