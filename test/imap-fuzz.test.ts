// Fuzzing the IMAP command parser and dispatch with fast-check, over a real connection to a
// logged-in session with a selected folder: whatever a command line holds, the server does
// not crash, answers every command with its own tag, and goes on serving.
import fc from 'fast-check';
import t from 'tap';
import { startApp } from './helpers/app.js';
import { rawImap, type RawImap } from './helpers/imap.js';
import { deliverDirect, simpleMessage } from './helpers/mail.js';

const CRLF = '\r\n';
const RUNS = Number(process.env.IMAP_FUZZ_RUNS ?? 600);
/** Every command name the server knows, less the ones that end the session or wait for more lines. */
const NAMES = [
  'CAPABILITY',
  'NOOP',
  'LOGIN',
  'ENABLE',
  'ID',
  'NAMESPACE',
  'LIST',
  'LSUB',
  'STATUS',
  'CREATE',
  'DELETE',
  'RENAME',
  'SUBSCRIBE',
  'UNSUBSCRIBE',
  'SELECT',
  'EXAMINE',
  'CHECK',
  'CLOSE',
  'UNSELECT',
  'EXPUNGE',
  'FETCH',
  'STORE',
  'SEARCH',
  'COPY',
  'MOVE',
  'UID',
  'APPEND',
  'FROBNICATE',
];
const WORDS = [
  'INBOX',
  'Sent',
  'Trash',
  '*',
  '%',
  '1',
  '1:*',
  '2,4:7',
  '*:3',
  '0',
  '4294967296',
  'FLAGS',
  '+FLAGS.SILENT',
  '-FLAGS',
  '\\Seen',
  '\\Deleted',
  '\\Bogus',
  '$Label',
  'BODY[]',
  'BODY.PEEK[HEADER.FIELDS (Subject)]',
  'BODY[1.2.MIME]<0.10>',
  'BODY[TEXT]<5.0>',
  'BODYSTRUCTURE',
  'ENVELOPE',
  'RFC822.SIZE',
  'MODSEQ',
  'CHANGEDSINCE',
  'UNCHANGEDSINCE',
  'VANISHED',
  'QRESYNC',
  'CONDSTORE',
  'RETURN',
  'SUBSCRIBED',
  'RECURSIVEMATCH',
  'SPECIAL-USE',
  'STATUS',
  'MESSAGES',
  'UIDNEXT',
  'HIGHESTMODSEQ',
  'CHARSET',
  'UTF-8',
  'OR',
  'NOT',
  'TEXT',
  'BODY',
  'HEADER',
  'SINCE',
  '1-Jan-2026',
  '31-Feb-2026',
  'NIL',
  'FETCH',
  'STORE',
  'SEARCH',
  'COPY',
  'MOVE',
  'EXPUNGE',
  'ALL',
  'FULL',
  'KEYWORD',
  'LARGER',
  'ANSWERED',
  'Archive/2026',
  '&APw-',
  '&-',
  '&Jjo',
];

const atomChars = fc.stringMatching(/^[\x21-\x7e]{1,12}$/);
const quoted = fc.string({ maxLength: 20 }).map((text) => `"${text.replace(/[\r\n]/g, '').replace(/[\\"]/g, '\\$&')}"`);
const literal = fc.uint8Array({ maxLength: 40 }).map((bytes) => `{${bytes.length}+}${CRLF}${Buffer.from(bytes).toString('latin1')}`);
const word = fc.oneof(fc.constantFrom(...WORDS), atomChars, quoted, literal);
const token: fc.Arbitrary<string> = fc.letrec((tie) => ({
  token: fc.oneof({ depthSize: 'small' }, word, word, tie('list')),
  list: fc.array(tie('token'), { maxLength: 5 }).map((items) => `(${items.join(' ')})`),
})).token as fc.Arbitrary<string>;

/** Commands shaped by the grammar (RFC 3501 section 9 and the extensions), with values drawn at random. */
const set = fc.oneof(fc.constantFrom('1', '1:*', '*', '2:3', '1,3', '3:1', '5', '1:4294967295'), fc.integer({ min: 1, max: 6 }).map(String));
const folder = fc.constantFrom('INBOX', 'Trash', 'Archive', 'Nope', '"Deep/Er"', 'inbox', '"&APw-ber"');
const flags = fc.subarray(['\\Seen', '\\Answered', '\\Flagged', '\\Deleted', '\\Draft', '$Label', 'Work']).map((items) => `(${items.join(' ')})`);
const fetchItems = fc
  .subarray(
    [
      'UID',
      'FLAGS',
      'ENVELOPE',
      'BODYSTRUCTURE',
      'BODY',
      'RFC822.SIZE',
      'INTERNALDATE',
      'MODSEQ',
      'BODY.PEEK[]',
      'BODY[1]',
      'BODY.PEEK[HEADER]',
      'BODY[TEXT]<0.8>',
      'BODY.PEEK[1.MIME]',
      'RFC822.HEADER',
    ],
    { minLength: 1 },
  )
  .map((items) => `(${items.join(' ')})`);
const searchKey = fc.constantFrom(
  'ALL',
  'SEEN',
  'UNSEEN',
  'DELETED',
  'KEYWORD $Label',
  'TEXT one',
  'BODY "two"',
  'FROM sender',
  'SINCE 1-Jan-2020',
  'LARGER 10',
  'NOT SEEN',
  'OR SEEN FLAGGED',
  'UID 1:*',
  'MODSEQ 1',
  'RECENT',
  'NEW',
  'HEADER Subject o',
);
const shaped = fc.oneof(
  fc
    .tuple(set, fetchItems, fc.constantFrom('', ' (CHANGEDSINCE 1)', ' (CHANGEDSINCE 1 VANISHED)'))
    .map(([s, items, modifier]) => `FETCH ${s} ${items}${modifier}`),
  fc.tuple(set, fetchItems).map(([s, items]) => `UID FETCH ${s} ${items}`),
  fc.tuple(set, fc.constantFrom('FLAGS', '+FLAGS', '-FLAGS.SILENT', '(UNCHANGEDSINCE 2) +FLAGS'), flags).map(([s, item, f]) => `STORE ${s} ${item} ${f}`),
  fc.array(searchKey, { minLength: 1, maxLength: 3 }).map((keys) => `UID SEARCH ${keys.join(' ')}`),
  fc.tuple(fc.constantFrom('COPY', 'MOVE', 'UID COPY', 'UID MOVE'), set, folder).map(([verb, s, f]) => `${verb} ${s} ${f}`),
  fc.tuple(fc.constantFrom('CREATE', 'DELETE', 'SUBSCRIBE', 'UNSUBSCRIBE', 'SELECT', 'EXAMINE'), folder).map(([verb, f]) => `${verb} ${f}`),
  fc.tuple(folder, folder).map(([from, to]) => `RENAME ${from} ${to}`),
  fc.tuple(folder, fc.constantFrom('(MESSAGES)', '(UIDNEXT UNSEEN HIGHESTMODSEQ)', '(RECENT UIDVALIDITY)')).map(([f, items]) => `STATUS ${f} ${items}`),
  fc.constantFrom(
    'LIST "" *',
    'LIST (SUBSCRIBED RECURSIVEMATCH) "" % RETURN (CHILDREN)',
    'LIST "" (INBOX Arch*) RETURN (STATUS (MESSAGES))',
    'LSUB "" *',
    'EXPUNGE',
    'UID EXPUNGE 1:3',
    'CLOSE',
    'UNSELECT',
    'CHECK',
    'NAMESPACE',
    'ENABLE QRESYNC',
  ),
  fc.tuple(folder, flags).map(([f, fl]) => `APPEND ${f} ${fl} {20+}${CRLF}Subject: x\r\n\r\nbody!`),
);

const random = fc
  .record({
    name: fc.oneof(fc.constantFrom(...NAMES), atomChars),
    args: fc.array(token, { maxLength: 8 }),
    noise: fc.option(
      fc.string({ maxLength: 10 }).map((text) => text.replace(/[\r\n{}]/g, '')),
      { nil: undefined },
    ),
  })
  .map(({ name, args, noise }) => ({ name, line: [name, ...args].join(' ') + (noise === undefined ? '' : ` ${noise}`) }));
const command = fc.oneof(
  random,
  shaped.map((line) => ({ name: line.split(' ')[0], line })),
);

/** Sends one command; resolves with what came back up to its tagged answer. */
const exchange = async (raw: RawImap, tag: string, line: string): Promise<string> => {
  raw.send(`${tag} ${line}${CRLF}`);
  return raw.read(new RegExp(`^${tag} (OK|NO|BAD)`, 'm'));
};

t.test(`${RUNS} random commands each get a tagged answer; the session survives them all`, async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  for (const subject of ['one', 'two', 'three']) await deliverDirect(app.app, [agent.email], simpleMessage({ subject, to: agent.email }));
  // Deleting or renaming the selected folder ends the session after its answer (as Dovecot does): log in again.
  let raw: RawImap = await rawImap(t, app.imapPort);
  let logins = 0;
  const login = async () => {
    raw = await rawImap(t, app.imapPort);
    raw.send(`l${(logins += 1)} LOGIN ${agent.email} ${agent.apiKey}${CRLF}`);
    await raw.read(new RegExp(`^l${logins} OK`, 'm'));
  };
  await login();
  let counter = 0;
  const seen = { ok: 0, no: 0, bad: 0 };
  await fc.assert(
    fc.asyncProperty(command, async ({ name, line }) => {
      if (/^(LOGOUT|IDLE|AUTHENTICATE|DONE)$/i.test(name)) return;
      const tag = `f${(counter += 1)}`;
      const answer = await exchange(raw, tag, line);
      const status = new RegExp(`^${tag} (OK|NO|BAD)`, 'm').exec(answer)?.[1];
      if (status === 'OK') seen.ok += 1;
      else if (status === 'NO') seen.no += 1;
      else seen.bad += 1;
      if (/SERVERBUG/.test(answer)) throw new Error(`an internal error for ${JSON.stringify(line)}: ${answer}`);
      if (/^\* BYE/m.test(answer)) await login();
      else if (/^(DELETE|RENAME) /i.test(line)) {
        raw.send(`${tag}n NOOP${CRLF}`);
        if (/^\* BYE/m.test(await raw.read(new RegExp(`^(${tag}n OK|\\* BYE .*)`, 'm')))) await login();
      }
      // Keep a folder selected most of the time, so message commands run deep.
      if (counter % 25 === 0) await exchange(raw, `${tag}s`, 'SELECT INBOX');
    }),
    { numRuns: RUNS, seed: Number(process.env.IMAP_FUZZ_SEED ?? 20261123), endOnFailure: true },
  );
  t.comment(`answers: ${seen.ok} OK, ${seen.no} NO, ${seen.bad} BAD; ${logins - 1} sessions ended by deleting their folder`);
  t.ok(seen.bad > 0 && seen.ok > 0, 'the generator reaches both good and bad commands');
  raw.send(`z1 NOOP${CRLF}`);
  t.match(await raw.read(/^z1 /m), /^z1 OK/m, 'still serving');
});

t.test('random bytes before any login: every line is answered, with its tag when it has one', async (t) => {
  const app = await startApp(t);
  const raw = await rawImap(t, app.imapPort);
  await fc.assert(
    fc.asyncProperty(fc.uint8Array({ minLength: 1, maxLength: 200 }), async (bytes) => {
      const line = Buffer.from(bytes)
        .toString('latin1')
        .replace(/[\r\n]/g, ' ')
        .replace(/\{\d+\+?\}$/, '');
      raw.send(`${line}${CRLF}p NOOP${CRLF}`);
      await raw.read(/^p OK/m);
    }),
    { numRuns: Math.ceil(RUNS / 3), seed: 11 },
  );
  t.pass('no line ended the connection');
});
