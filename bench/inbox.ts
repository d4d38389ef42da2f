/**
 * `npm run bench:inbox`: one mailbox with 100,000 messages; p50/p99 of the inbox list
 * (limit 50: the first page, the middle one at offset 50,000 and a deep one at 99,000), of read,
 * and of full-text searches, measured through the service layer and over HTTP (keep-alive
 * fetch, one request at a time), then over HTTP through a second `agentpost serve` on the same
 * data folder. The searches repeat, so their totals are kept; the "counted
 * afresh" rows are what a search costs when its total is not (see recased).
 * Options: BENCH_MESSAGES=N or --messages N (default 100000), --iterations N (default 300),
 * --data DIR (reuse a data folder built by an earlier run with the same count; it is kept).
 * Prints the database and the search index's size on disk against the raw bytes stored.
 */
import { packTexts } from '../src/core/packed-text.js';
import { STORED_BODY_VERSION, type MessageStructure, type StoredBody, type StoredContent } from '../src/core/stored-message.js';
import { structureOf } from '../src/mime/structure.js';
import { structureWire } from '../src/mime/imap-notation.js';
import { plainTextStart } from '../src/mime/plain-body.js';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../src/config/load.js';
import { createLogger } from '../src/core/logger.js';
import type { AddressEntry, Principal } from '../src/core/types.js';
import { createApp, type App } from '../src/main.js';
import { serveBeside } from './ingest-targets.js';
import { sourceSearchWorker } from '../src/workers/search-worker-source.js';
import type { ParsedMessage } from '../src/mime/parse.js';
import { argValue, fmt, percentile, prng, tempDir, vocabulary } from './lib.js';

const messages = Number(process.env.BENCH_MESSAGES ?? argValue('messages', 100_000));
if (!Number.isInteger(messages) || messages < 1) throw new Error('BENCH_MESSAGES must be a positive integer');
const iterations = argValue('iterations', 300);
const dataIndex = process.argv.indexOf('--data');
const keptDir = dataIndex >= 0 ? process.argv[dataIndex + 1] : null;

const random = prng(42);
const words = vocabulary(20_000, random);
const SENDERS: AddressEntry[] = Array.from({ length: 500 }, (_, i) => ({
  name: `${words.words[i * 7]} ${words.words[i * 7 + 1]}`,
  email: `user${i}@example${i % 40}.org`,
}));

/** The parsed fields and a raw message built from the same values (no parser: it is a benchmark). */
const makeMessage = (index: number, to: string): { raw: Buffer; parsed: ParsedMessage } => {
  const from = SENDERS[Math.floor(random() * SENDERS.length)];
  const subject = words.sentence(3 + Math.floor(random() * 5));
  const text = `${Array.from({ length: 8 }, () => words.sentence(12)).join('\n')}\n`;
  const date = Date.UTC(2025, 0, 1) + index * 60_000;
  const messageId = `<inbox-bench-${index}@example.org>`;
  const raw = Buffer.from(
    [
      `From: "${from.name}" <${from.email}>`,
      `To: <${to}>`,
      `Subject: ${subject}`,
      `Date: ${new Date(date).toUTCString()}`,
      `Message-ID: ${messageId}`,
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      '',
      text.replaceAll('\n', '\r\n'),
    ].join('\r\n'),
  );
  const structure = structureOf(raw);
  return {
    raw,
    parsed: {
      messageId,
      inReplyTo: null,
      references: [],
      subject,
      from,
      to: [{ email: to }],
      cc: [],
      date,
      text,
      html: null,
      attachments: [],
      encrypted: false,
      // The stored body ingest would build (the structure is our own linear code; the text is known).
      body: storedBody(raw, structure, { text, html: null, attachments: [], references: [], fallback: null, extractedText: text, extractedHtml: null }),
    },
  };
};

const storedBody = (raw: Buffer, structure: MessageStructure, content: StoredContent): StoredBody => ({
  version: STORED_BODY_VERSION,
  structure,
  wire: structureWire(structure),
  content,
  packed: packTexts(content),
  plainTextStart: plainTextStart(raw, structure.root.bodyStart, content.text, content.html),
});

const fill = async (app: App, address: string): Promise<void> => {
  const mailbox = await app.services.mailbox.mailboxForAddress(address);
  if (!mailbox) throw new Error('no mailbox');
  const started = performance.now();
  const batch = 2000;
  for (let from = 0; from < messages; from += batch) {
    const items = Array.from({ length: Math.min(batch, messages - from) }, (_, i) => makeMessage(from + i, address));
    await app.store.transaction(async () => {
      for (const item of items) await app.services.mailbox.append(mailbox, 'INBOX', item.raw, item.parsed);
    });
  }
  console.log(`filled ${messages} messages in ${fmt((performance.now() - started) / 1000, 1)} s`);
  const indexing = performance.now();
  await app.services.searchIndex.indexQueued(); // what the indexer worker does a quarter second after mail is stored
  console.log(`indexed them for search in ${fmt((performance.now() - indexing) / 1000, 1)} s`);
};

/** `prepare` runs before each sample, untimed. */
const time = async (run: () => unknown, count: number, prepare?: () => Promise<void>): Promise<number[]> => {
  for (let i = 0; i < Math.min(20, count); i += 1) await run(); // warm caches and statements
  const samples: number[] = [];
  for (let i = 0; i < count; i += 1) {
    await prepare?.();
    const started = performance.now();
    await run();
    samples.push(performance.now() - started);
  }
  return samples;
};

const report = (label: string, samples: number[]): void => {
  console.log(`${label.padEnd(44)} p50 ${fmt(percentile(samples, 50)).padStart(7)} ms   p99 ${fmt(percentile(samples, 99)).padStart(7)} ms`);
};

/**
 * The text in the `n`th mix of letter case: the same matches, but another query to the
 * index, whose exact total is not kept from an earlier search (store/match-counts.ts), so
 * it is counted afresh, as by the first search after new mail is indexed. Counted across
 * both layers: a case the service layer asked would be kept for HTTP.
 */
let recasings = 0;
const recased = (text: string): string => {
  recasings += 1;
  let letter = 0;
  return text.replace(/\p{L}/gu, (char) => ((recasings >> (letter++ % 30)) & 1 ? char.toUpperCase() : char));
};

interface Case {
  label: string;
  path: () => string;
  service: (principal: Principal) => unknown;
  prepare?: () => Promise<void>;
}

/**
 * One new message in the bench mailbox's Sent folder, indexed: the index changes as under
 * ingest, while INBOX stays as it was (a kept data folder keeps its INBOX count).
 */
const newMailElsewhere = (app: App, principal: Principal) => async (): Promise<void> => {
  const mailbox = await app.services.mailbox.mailboxOfAccount(principal.accountId);
  const { raw, parsed } = makeMessage(0, mailbox.address);
  await app.store.transaction(() => app.services.mailbox.append(mailbox, 'Sent', raw, parsed));
  await app.services.searchIndex.catchUp();
};

const cases = (app: App, total: number, principal: Principal): Case[] => {
  const list = (offset: number, search?: string) => (principal: Principal) =>
    app.services.mailbox.list(principal, { folder: 'INBOX', limit: 50, offset, ...(search ? { search } : {}) });
  const uid = () => 1 + Math.floor(random() * total);
  const common = words.words[0];
  const mid = words.words[300];
  const rare = words.words[15_000];
  const sender = SENDERS[3].email;
  const searches: [string, string][] = [
    [`search common word "${common}"`, common],
    [`search mid-frequency word "${mid}"`, mid],
    [`search rare word "${rare}"`, rare],
    [`search two words "${words.words[1]} ${words.words[2]}"`, `${words.words[1]} ${words.words[2]}`],
    [`search sender "${sender}"`, sender],
  ];
  const far = Math.max(0, total - 1000);
  const middle = Math.floor(total / 2);
  return [
    { label: 'list limit 50, offset 0', path: () => '/api/v1/agent/inbox?limit=50', service: list(0) },
    { label: `list limit 50, offset ${middle}`, path: () => `/api/v1/agent/inbox?limit=50&offset=${middle}`, service: list(middle) },
    { label: `list limit 50, offset ${far}`, path: () => `/api/v1/agent/inbox?limit=50&offset=${far}`, service: list(far) },
    {
      label: 'read a random message (markAsRead=false)',
      path: () => `/api/v1/agent/email/${uid()}?markAsRead=false`,
      service: (principal) => app.services.mailbox.read(principal, { uid: uid(), folder: 'INBOX', markAsRead: false }),
    },
    ...searches.map(([label, text]) => ({
      label,
      path: () => `/api/v1/agent/inbox?limit=50&search=${encodeURIComponent(text)}`,
      service: list(0, text),
    })),
    // The costly counts, of words in (nearly) every message. The common word's letters give 512
    // recasings, one for each search of both layers up to 236 iterations; beyond, some repeat.
    ...[searches[0], searches[3]].map(([label, text]) => ({
      label: `${label.replace(/ ".*/, '')}, counted afresh`,
      path: () => `/api/v1/agent/inbox?limit=50&search=${encodeURIComponent(recased(text))}`,
      service: (principal: Principal) => list(0, recased(text))(principal),
    })),
    // The first search after new mail: its total is brought forward from the one before.
    ...[searches[0], searches[3]].map(([label, text]) => ({
      label: `${label.replace(/ ".*/, '')}, after new mail`,
      path: () => `/api/v1/agent/inbox?limit=50&search=${encodeURIComponent(text)}`,
      service: list(0, text),
      prepare: newMailElsewhere(app, principal),
    })),
  ];
};

const fileBytes = (file: string): number => (existsSync(file) ? statSync(file).size : 0);
const mb = (bytes: number): string => `${fmt(bytes / 1024 / 1024, 1)} MB`;

/** The database and the search index on disk (with their WAL files) against the raw message bytes they hold. */
const reportSizes = async (app: App, dataDir: string): Promise<void> => {
  const raw = await app.store.messageRaw.totalBytes();
  const db = fileBytes(join(dataDir, 'agentpost.db')) + fileBytes(join(dataDir, 'agentpost.db-wal'));
  const index = fileBytes(join(dataDir, 'agentpost.search.db')) + fileBytes(join(dataDir, 'agentpost.search.db-wal'));
  console.log(`on disk: database ${mb(db)} (${fmt(db / raw)}x the raw bytes), search index ${mb(index)} (${fmt(index / raw)}x); raw messages ${mb(raw)}`);
};

/** Each case over HTTP against `baseUrl`. */
const httpPart = async (title: string, baseUrl: string, headers: Record<string, string>, entries: ReturnType<typeof cases>): Promise<void> => {
  console.log(title);
  for (const entry of entries) {
    report(
      entry.label,
      await time(
        async () => {
          const path = entry.path();
          const response = await fetch(baseUrl + path, { headers });
          if (response.status !== 200) throw new Error(`${path}: ${response.status}`);
          await response.arrayBuffer();
        },
        iterations,
        entry.prepare,
      ),
    );
  }
};

const main = async (): Promise<void> => {
  const dir = keptDir ? { path: keptDir, remove: () => undefined } : tempDir('agentpost-bench-inbox-');
  const reuse = keptDir !== null && existsSync(`${keptDir}/agentpost.db`);
  const config = loadConfig({ overrides: { dataDir: dir.path, http: { port: 0 }, smtp: { port: 0 }, log: { level: 'silent' } } });
  const app = createApp(config, { logger: createLogger('silent', () => {}), searchWorker: sourceSearchWorker });
  await app.start();
  try {
    // The key is stored only hashed, so a kept data folder keeps the bench key beside it.
    const credentials = join(dir.path, 'bench-credentials.json');
    let apiKey: string;
    if (reuse) {
      apiKey = (JSON.parse(readFileSync(credentials, 'utf8')) as { apiKey: string }).apiKey;
    } else {
      const agent = await app.services.accounts.register({ agentId: 'bench' }, '127.0.0.1');
      apiKey = agent.apiKey;
      if (keptDir) writeFileSync(credentials, JSON.stringify({ apiKey }));
      await fill(app, agent.email);
    }
    const principal = await app.services.auth.authenticate(apiKey);
    console.log(
      `bench:inbox  ${messages} messages, ${iterations} iterations each, load ${loadavg()
        .map((v) => fmt(v))
        .join(' ')}`,
    );
    await reportSizes(app, dir.path);
    console.log('-- service layer');
    for (const entry of cases(app, messages, principal)) report(entry.label, await time(() => entry.service(principal), iterations, entry.prepare));
    const headers = { authorization: `Bearer ${apiKey}`, 'user-agent': 'agentpost-bench' };
    await httpPart('-- HTTP (fetch, keep-alive)', app.baseUrl, headers, cases(app, messages, principal));
    // A second process on the data folder, one service (docs/design.md, "Several processes on
    // one store"): the same reads through it, the new mail still stored by the first.
    const beside = await serveBeside({ dataDir: dir.path, log: { level: 'warn' } }, join(dir.path, 'bench-node-b.json'), 'node-b');
    try {
      await httpPart('-- HTTP through a second process on the data folder', beside.baseUrl, headers, cases(app, messages, principal));
    } finally {
      await beside.stop();
    }
    console.log(
      `load after ${loadavg()
        .map((v) => fmt(v))
        .join(' ')}`,
    );
  } finally {
    await app.stop();
    dir.remove();
  }
};

await main();
