// FETCH and STORE of many messages go in steps sized by time (src/core/paced-steps.ts), and a
// FETCH step's bytes go to the socket every 256 KB (src/imap/fetch.ts): whatever the steps,
// every message is answered once, in order, with its bytes whole (RFC 3501 sections 6.4.5
// and 6.4.6), and a STORE with UNCHANGEDSINCE reports every message it left (RFC 7162).
import t from 'tap';
import { MESSAGE_STEPS } from '../src/core/paced-steps.js';
import { startApp } from './helpers/app.js';
import { rawImap } from './helpers/imap.js';
import { deliverDirect, simpleMessage } from './helpers/mail.js';

const CRLF = '\r\n';
const COUNT = 600;

/** About 1.5 KB of text naming its message on every line, so a misplaced byte range shows. */
const bodyOf = (index: number): string => Array.from({ length: 40 }, (_, line) => `message ${index} line ${line} of forty`).join(CRLF);

t.test('FETCH and STORE of 600 messages over several steps answer each once, in order, whole', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  const indexes = Array.from({ length: COUNT }, (_, index) => index + 1);
  await Promise.all(
    indexes.map((index) => deliverDirect(app.app, [agent.email], simpleMessage({ subject: `m${index}`, to: agent.email, body: bodyOf(index) }))),
  );
  const raw = await rawImap(t, app.imapPort);
  raw.send(`a1 LOGIN ${agent.email} ${agent.apiKey}${CRLF}a0 ENABLE CONDSTORE${CRLF}a2 SELECT INBOX${CRLF}`);
  await raw.read(/^a2 OK/m);

  raw.send(`a3 UID FETCH 1:* (UID BODY.PEEK[])${CRLF}`);
  const bodies = await raw.read(/^a3 OK/m);
  const seen: number[] = [];
  const wrong: string[] = [];
  const head = /\* (\d+) FETCH \(UID (\d+) BODY\[\] \{(\d+)\}\r\n/g;
  for (let match = head.exec(bodies); match; match = head.exec(bodies)) {
    const [sequence, uid, length] = [Number(match[1]), Number(match[2]), Number(match[3])];
    const literal = bodies.slice(head.lastIndex, head.lastIndex + length);
    // Stored concurrently, so a UID is not its index: the subject names the message.
    const index = Number(/\r\nSubject: m(\d+)\r\n/.exec(literal)?.[1]);
    if (literal.length !== length) wrong.push(`UID ${uid}: ${literal.length} of ${length} bytes`);
    else if (!literal.endsWith(`${bodyOf(index)}${CRLF}`)) wrong.push(`UID ${uid}: not message ${index}'s bytes`);
    if (sequence !== seen.length + 1 || uid !== sequence) wrong.push(`UID ${uid} answered as sequence number ${sequence}, after ${seen.length} others`);
    seen.push(index);
    head.lastIndex += length;
  }
  t.same(wrong, [], 'each literal is one whole message, in UID order');
  t.same(
    [...seen].sort((a, b) => a - b),
    indexes,
    'every message once',
  );

  raw.send(`a4 FETCH 1:* (FLAGS ENVELOPE)${CRLF}`);
  const sync = await raw.read(/^a4 OK/m);
  const answered = [...sync.matchAll(/^\* (\d+) FETCH \(FLAGS \([^)]*\) ENVELOPE \((?:NIL|"[^"]*") "m(\d+)"/gm)];
  t.same(
    answered.map((match) => Number(match[1])),
    indexes,
    'the sync shape too: every sequence number once, in order',
  );
  t.same(
    answered.map((match) => Number(match[2])).sort((a, b) => a - b),
    indexes,
    'with every message',
  );

  raw.send(`a6 STORE 1:* +FLAGS (\\Flagged)${CRLF}`);
  const stored = await raw.read(/^a6 /m);
  const flagged = [...stored.matchAll(/^\* (\d+) FETCH \(FLAGS \(([^)]*)\) MODSEQ \((\d+)\)\)/gm)];
  t.same(
    flagged.map((match) => Number(match[1])),
    indexes,
    'STORE answers every message once, in order',
  );
  t.ok(
    flagged.every((match) => match[2].split(' ').includes('\\Flagged')),
    'each with its new flags',
  );
  t.match(stored, /^a6 OK STORE completed/m);
  // UNCHANGEDSINCE the mod-sequence of the first step's last message: every message changed
  // later is left and named in MODIFIED, whichever step it falls in; the others change. (The
  // middle message's would not do: a step is one transaction, and on a fast machine the second
  // step takes messages 101 to 600, the middle one among them, at one mod-sequence.)
  const middle = Number(flagged[MESSAGE_STEPS.first - 1][3]);
  raw.send(`a7 STORE 1:* (UNCHANGEDSINCE ${middle}) +FLAGS.SILENT (\\Seen)${CRLF}`);
  const conditional = await raw.read(/^a7 /m);
  const named = (/^a7 OK \[MODIFIED ([\d:,]+)\]/m.exec(conditional)?.[1] ?? '').split(',').flatMap((range) => {
    const [low, high = low] = range.split(':').map(Number);
    return Array.from({ length: high - low + 1 }, (_, offset) => low + offset);
  });
  const later = flagged.filter((match) => Number(match[3]) > middle).map((match) => Number(match[1]));
  t.ok(later.length > 0, 'the STORE gave later messages later mod-sequences');
  t.same(named, later, 'MODIFIED names exactly the messages changed since');
  raw.send(`a8 FETCH 1:* (FLAGS)${CRLF}`);
  const nowSeen = [...(await raw.read(/^a8 OK/m)).matchAll(/^\* (\d+) FETCH \(FLAGS \(([^)]*)\)/gm)]
    .filter((match) => match[2].split(' ').includes('\\Seen'))
    .map((match) => Number(match[1]));
  t.same(
    nowSeen,
    indexes.filter((index) => !later.includes(index)),
    'and every other message changed',
  );
});
