// A message too large to be written in one synchronous commit is written in pieces ahead of it
// (src/store/large-values.ts, migration 84): its raw bytes and its texts. Every way of reading
// it answers what it would have answered from one row: the REST read (text and an attachment
// cut from the middle of the pieces), IMAP BODY[] whole and in part, IMAP SEARCH in its text,
// a COPY, and deleting each copy takes its values with it. Values whose commit never came are
// swept after an hour, not before.
import { createHash } from 'node:crypto';
import t, { type Test } from 'tap';
import { ManualClock } from '../src/core/clock.js';
import { PIECE_SIZE, piecesOf } from '../src/store/large-values.js';
import { startApp, type TestApp } from './helpers/app.js';
import { imapLogin, rawImap } from './helpers/imap.js';
import { folderOf, storedRaw } from './helpers/mail.js';
import { smtpSendRaw } from './helpers/smtp.js';

const MARKER = 'zebracrossing';

/** A text/plain message of about 2.5 MB whose last line holds MARKER: its text is staged too. */
const plainMessage = (to: string): Buffer =>
  Buffer.from(
    [
      'From: big@example.org',
      `To: ${to}`,
      'Subject: a long text',
      'Message-ID: <long-text@example.org>',
      'Content-Type: text/plain; charset=utf-8',
      '',
      ...Array.from({ length: 36_000 }, (_, line) => `line ${line} of a long text that goes on and on and on and on and on`),
      `the last word is ${MARKER}`,
      '',
    ].join('\r\n'),
  );

/** Pseudo-random bytes: an attachment that does not compress. */
const attachmentBytes = (size: number): Buffer => {
  const bytes = Buffer.alloc(size);
  let state = 0x9e3779b9;
  for (let i = 0; i < size; i++) {
    state = (state * 1103515245 + 12345) >>> 0;
    bytes[i] = state >>> 24;
  }
  return bytes;
};

const withAttachment = (to: string, attachment: Buffer): Buffer =>
  Buffer.from(
    [
      'From: big@example.org',
      `To: ${to}`,
      'Subject: an attachment',
      'Message-ID: <attachment@example.org>',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="b"',
      '',
      '--b',
      'Content-Type: text/plain',
      '',
      'see the attached file',
      '--b',
      'Content-Type: application/octet-stream; name="data.bin"',
      'Content-Disposition: attachment; filename="data.bin"',
      'Content-Transfer-Encoding: base64',
      '',
      ...(attachment.toString('base64').match(/.{1,76}/g) ?? []),
      '--b--',
      '',
    ].join('\r\n'),
  );

const sha = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

const count = (app: TestApp, table: 'stored_values' | 'stored_pieces'): number =>
  app.app.store.db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;

/** BODY.PEEK[TEXT]<start.300> of UID 1 in INBOX, over a raw IMAP conversation: the literal's bytes. */
const partialText = async (t: Test, app: TestApp, agent: { email: string; apiKey: string }, start: number): Promise<Buffer> => {
  const session = await rawImap(t, app.imapPort);
  session.send(`a LOGIN "${agent.email}" "${agent.apiKey}"\r\nb SELECT INBOX\r\n`);
  await session.read(/^b OK/m);
  session.send(`c UID FETCH 1 BODY.PEEK[TEXT]<${start}.300>\r\n`);
  const answer = await session.read(/^c OK/m);
  const literal = answer.indexOf('{300}\r\n');
  return Buffer.from(answer.slice(literal + 7, literal + 7 + 300), 'latin1');
};

t.test('pieces: a text is never cut inside a surrogate pair; bytes and texts join back whole', async (t) => {
  const text = `${'a'.repeat(PIECE_SIZE - 1)}\u{1F600}${'b'.repeat(10)}`;
  const pieces = piecesOf(text) as string[];
  t.equal(pieces.length, 2);
  t.equal(pieces[0].length, PIECE_SIZE - 1, 'the cut moved before the pair');
  t.equal(pieces.join(''), text);
  const bytes = attachmentBytes(PIECE_SIZE * 2 + 17);
  const byteSlices = piecesOf(bytes) as Buffer[];
  t.same(
    byteSlices.map((piece) => piece.length),
    [PIECE_SIZE, PIECE_SIZE, 17],
  );
  t.ok(Buffer.concat(byteSlices).equals(bytes));
  t.same(piecesOf(Buffer.alloc(0)), [], 'nothing to write for nothing');
});

t.test('a large message reads back the same by REST and IMAP, in whole and in part', async (t) => {
  const app = await startApp(t);
  const agent = await app.register('large-reader');
  await smtpSendRaw(app.smtpPort, 'big@example.org', [agent.email], plainMessage(agent.email));
  const attachment = attachmentBytes(3 * 1024 * 1024 + 5);
  await smtpSendRaw(app.smtpPort, 'big@example.org', [agent.email], withAttachment(agent.email, attachment));

  const rows = app.app.store.db
    .prepare(
      'SELECT r.raw_value_id AS rawValue, length(r.raw) AS inline, b.values_json AS texts FROM message_raw r JOIN message_bodies b USING (message_rowid) ORDER BY message_rowid',
    )
    .all() as { rawValue: number | null; inline: number; texts: string | null }[];
  t.equal(rows.length, 2);
  t.ok(
    rows.every((row) => row.rawValue !== null && row.inline === 0),
    'both raw messages were written in pieces',
  );
  t.same(Object.keys(JSON.parse(rows[0].texts ?? '{}')), ['text'], "the long text's text was written in pieces");
  t.equal(rows[1].texts, null, "the attachment's small text was written in its commit");

  const inbox = await app.api('GET', '/api/v1/agent/inbox', { key: agent.apiKey });
  const [withFile, longText] = inbox.body.emails as { id: string }[];
  const read = await app.api('GET', `/api/v1/agent/email/${longText.id}`, { key: agent.apiKey });
  t.equal(read.status, 200);
  t.ok((read.body.text as string).trimEnd().endsWith(`the last word is ${MARKER}`), 'the whole text, its end included');
  t.equal((read.body.text as string).split('\n').length, 36_002);
  const file = await app.api('GET', `/api/v1/agent/email/${withFile.id}`, { key: agent.apiKey });
  const [stored] = file.body.attachments as { content: string }[];
  t.equal(sha(Buffer.from(stored.content, 'base64')), sha(attachment), 'the attachment, cut across pieces, byte for byte');

  const raw = await storedRaw(app.app, agent.email, 1);
  t.ok(
    raw
      .subarray(raw.length - 40)
      .toString()
      .includes(MARKER),
    'the stored raw bytes end with the message',
  );
  const imap = await imapLogin(t, app.imapPort, agent.email, agent.apiKey);
  await imap.mailboxOpen('INBOX');
  const whole = await imap.fetchOne('1', { source: true }, { uid: true });
  t.ok(whole ? whole.source?.equals(raw) : false, 'BODY[] is the stored bytes');
  const start = PIECE_SIZE - 100;
  const bodyStart = raw.indexOf('\r\n\r\n') + 4;
  t.ok((await partialText(t, app, agent, start)).equals(raw.subarray(bodyStart + start, bodyStart + start + 300)), 'a partial FETCH across two pieces');
  t.same(await imap.search({ body: MARKER }, { uid: true }), [1], 'SEARCH BODY finds the last word');
  t.same(await imap.search({ header: { 'message-id': 'attachment@example.org' } }, { uid: true }), [2], "SEARCH HEADER reads a large message's header");
});

t.test('a copy has values of its own; deleting each message deletes its values and pieces', async (t) => {
  const app = await startApp(t);
  const agent = await app.register('large-copier');
  await smtpSendRaw(app.smtpPort, 'big@example.org', [agent.email], plainMessage(agent.email));
  const values = count(app, 'stored_values');
  t.equal(values, 2, 'the raw bytes and the text');
  const original = await storedRaw(app.app, agent.email, 1);
  const imap = await imapLogin(t, app.imapPort, agent.email, agent.apiKey);
  await imap.mailboxCreate('Kept');
  await imap.mailboxOpen('INBOX');
  await imap.messageCopy('1', 'Kept', { uid: true });
  t.equal(count(app, 'stored_values'), 4, 'the copy owns copies of both');
  await imap.messageDelete('1', { uid: true });
  t.equal(count(app, 'stored_values'), 2, "the original's values went with it");
  t.ok((await storedRaw(app.app, agent.email, 1, 'Kept')).equals(original), 'the copy reads as the original did');
  const kept = await app.api('GET', `/api/v1/agent/inbox?folder=Kept`, { key: agent.apiKey });
  const copy = await app.api('GET', `/api/v1/agent/email/${(kept.body.emails as { id: string }[])[0].id}?folder=Kept`, { key: agent.apiKey });
  t.ok((copy.body.text as string).includes(MARKER), "the copy's text is whole");
  await imap.mailboxOpen('Kept');
  await imap.messageDelete('1', { uid: true });
  t.equal(count(app, 'stored_values'), 0);
  t.equal(count(app, 'stored_pieces'), 0, 'no piece is left behind');
  t.equal((await folderOf(app.app, agent.email, 'Kept')).messageCount, 0);
});

t.test('values written for a commit that never came are swept after an hour, not before', async (t) => {
  const clock = new ManualClock('2026-03-01T10:00:00Z');
  const app = await startApp(t, {}, { clock });
  const store = app.app.store;
  const valueId = await store.stage(attachmentBytes(PIECE_SIZE + 1), clock.now().getTime());
  t.not(valueId, null, 'over a piece: staged');
  t.equal(await store.stage(Buffer.alloc(PIECE_SIZE), clock.now().getTime()), null, 'one piece or less goes in its commit');
  t.equal(count(app, 'stored_pieces'), 2);
  clock.advance(30 * 60 * 1000);
  t.equal(await app.app.services.mailbox.staging.sweep(), 0, 'half an hour later it may still be waiting for its commit');
  clock.advance(31 * 60 * 1000);
  t.equal(await app.app.services.mailbox.staging.sweep(), 1, 'past the hour it is swept');
  t.equal(count(app, 'stored_pieces'), 0);
});
