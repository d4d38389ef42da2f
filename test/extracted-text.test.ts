// The new text of a message (extractedText, extractedHtml): computed in the parse worker when
// the message is stored, served by every read. The corpus is written the way Gmail, Outlook,
// Apple Mail and Thunderbird quote (test/helpers/reply-corpus.ts).
import EmailReplyParser from 'email-reply-parser';
import fc from 'fast-check';
import nodemailer from 'nodemailer';
import t from 'tap';
import { EXTRACT_MAX_CHARS, extractReplyText, parseReply } from '../src/mime/extract-text.js';
import { extractReplyHtml } from '../src/mime/extract-html.js';
import { parseMessage } from '../src/mime/parse.js';
import { startApp } from './helpers/app.js';
import { callTool, mcpClient } from './helpers/mcp.js';
import { replyCorpus } from './helpers/reply-corpus.js';

t.test('each client style: the new text without the quote and signature', async (t) => {
  for (const sample of replyCorpus) {
    t.equal(extractReplyText(sample.text), sample.reply, `${sample.client}: text`);
    const html = extractReplyHtml(sample.html);
    t.notOk(html.includes(sample.quotedMarker), `${sample.client}: html without the quoted block`);
    t.ok(html.includes(sample.reply.split('\n')[0]), `${sample.client}: html keeps the new text`);
  }
});

t.test('what quotes nothing is kept whole; entities and markup as they were', async (t) => {
  t.equal(extractReplyText('Just a note.\nSecond line.'), 'Just a note.\nSecond line.');
  const html = '<p>a &amp; b &eacute;</p><blockquote>a plain blockquote is not a reply quote</blockquote>';
  t.equal(extractReplyHtml(html), html, 'nothing marked: the same string');
  t.equal(extractReplyHtml('<p>a &amp; b</p><blockquote type="cite">old</blockquote>'), '<p>a &amp; b</p>');
});

t.test('bounds: long lines stay content, an oversized text is kept whole, crafted lines end', async (t) => {
  const long = `Intro ${'word '.repeat(200)}end`;
  t.equal(
    extractReplyText(`${long}\n\nOn Mon, Jan 8, 2024 at 10:15 AM A <a@example.com> wrote:\n> old ${'x'.repeat(400)}\n`),
    long,
    'a long line of the reply comes back; a long quoted line goes with its quote',
  );
  const quotedLong = `> ${'q'.repeat(400)}`;
  t.equal(extractReplyText(`new\n\nOn Mon, Jan 8, 2024 at 10:15 AM A <a@example.com> wrote:\n${quotedLong}\n`), 'new');
  t.equal(extractReplyText('a \uE0000\uE001 b\nline'), 'a \uE0000\uE001 b\nline', 'our token characters in the text are content');
  const oversized = `${'a'.repeat(EXTRACT_MAX_CHARS)}\n> quoted`;
  t.equal(extractReplyText(oversized), oversized, 'over the size bound: nothing removed');
  const crafted = `${`On ${'a '.repeat(200)}`.slice(0, 250)}\n`.repeat(400);
  t.equal(extractReplyText(crafted).length > 0, true, 'lines crafted for backtracking end (bounded by line length and size)');
});

t.test('the screen before email-reply-parser answers as the parser does, on random texts', async (t) => {
  // Pieces of text: plain words, white space of every kind, line ends, and the marks and words
  // the parser's patterns look for (rarer), so random texts land on both sides of the screen.
  const plain = 'word Text d é 2024 10:15 a@b.example <x@y.example> "Name" , . ! : ~ - _ = + > < [ ]'.split(' ');
  const space = [' ', '  ', '\t', '\u00a0', '\n', '\n', '\n\n', '\r\n', '\r', ' \n', '\uE000'];
  const marks = [
    '>',
    '> ',
    '--',
    '-- ',
    '__',
    '==',
    '++',
    'On ',
    ' wrote:',
    'On Mon, 8 Jan, A wrote:',
    'From: ',
    'De: ',
    'Sent from ',
    'Regards,',
    'cheers',
    'Original Message',
    '>:',
    '写道：',
  ];
  const piece = fc.oneof(
    { weight: 12, arbitrary: fc.constantFrom(...plain) },
    { weight: 12, arbitrary: fc.constantFrom(...space) },
    { weight: 1, arbitrary: fc.constantFrom(...marks) },
  );
  const reference = new EmailReplyParser();
  let screenedOut = 0;
  await fc.assert(
    fc.property(fc.array(piece, { maxLength: 80 }), (pieces) => {
      const text = pieces.join('').replace(/\r\n/g, '\n');
      const expected = reference.parseReply(text);
      if (!/(?:^|\n)>|--|wrote|From|De|Sent|Regards|cheers|Original|>:|写道/.test(text)) screenedOut += 1;
      return parseReply(text) === expected;
    }),
    { numRuns: 3000, seed: 20261124 },
  );
  t.ok(screenedOut > 1000, `most random texts take the short way (${screenedOut} of 3000)`);
});

t.test('a parse cut off by its time budget keeps the whole text as the new text', async (t) => {
  const raw = Buffer.from(`From: a@example.org\r\nSubject: x\r\n\r\nnew\r\n\r\nOn Mon, Jan 8, 2024 at 10:15 AM A <a@example.com> wrote:\r\n> old\r\n`);
  const full = await parseMessage(raw);
  t.equal(full.body?.content.extractedText, 'new');
  const bounded = await parseMessage(raw, { fallback: 'timeout' });
  t.equal(bounded.body?.content.extractedText, bounded.body?.content.text.trimEnd());
});

t.test('over SMTP: REST and MCP reads answer extractedText and extractedHtml from what ingest stored', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: app.smtpPort, ignoreTLS: true });
  t.teardown(() => transport.close());
  for (const sample of replyCorpus) {
    await transport.sendMail({ from: 'alice@example.com', to: agent.email, subject: `Re: ${sample.client}`, text: sample.text, html: sample.html });
  }
  await transport.sendMail({ from: 'alice@example.com', to: agent.email, subject: 'plain', text: 'Nothing quoted here.' });
  const client = await mcpClient(t, app.baseUrl, { key: agent.apiKey });
  for (const [index, sample] of replyCorpus.entries()) {
    const read = await app.api('GET', `/api/v1/agent/email/${index + 1}?markAsRead=false`, { key: agent.apiKey });
    t.equal(read.status, 200);
    t.equal(read.body.extractedText, sample.reply, `${sample.client}: extractedText`);
    t.notOk(read.body.extractedHtml.includes(sample.quotedMarker), `${sample.client}: extractedHtml`);
    t.ok(read.body.text.includes('Can we meet on Tuesday'), `${sample.client}: text is still the whole text`);
    const viaMcp = await callTool(client, 'get_email', { id: String(index + 1), markAsRead: false });
    t.equal(viaMcp.body.extractedText, sample.reply, `${sample.client}: MCP get_email`);
  }
  const plain = await app.api('GET', `/api/v1/agent/email/${replyCorpus.length + 1}`, { key: agent.apiKey });
  t.equal(plain.body.extractedText, 'Nothing quoted here.');
  t.equal(plain.body.extractedHtml, null, 'no HTML, no extractedHtml');
  const row = app.app.store.db.prepare('SELECT extracted_text FROM message_bodies ORDER BY message_rowid DESC LIMIT 1').get() as { extracted_text: unknown };
  t.equal(row.extracted_text, null, 'a message that quotes nothing does not store its text twice');
});
