// The header limits (smtp.maxHeaderBytes, smtp.maxHeaderLines; docs/operators/inbound.md
// "Header limits"): counted up to and with the empty line that ends the header, exact at
// the boundary; over them the MX and submission answer 552 5.3.4 and IMAP APPEND NO [LIMIT],
// and nothing is stored or charged.
import t from 'tap';
import { isAppError } from '../src/core/errors.js';
import { checkHeaderLimits, type HeaderLimits } from '../src/mime/header-limits.js';
import { startApp } from './helpers/app.js';
import { rawImap } from './helpers/imap.js';
import { smtpSendRaw, submissionTransport } from './helpers/smtp.js';

const LIMITS: HeaderLimits = { maxBytes: 2048, maxLines: 100 };

/** Why checkHeaderLimits refused, or 'ok'. */
const verdict = (raw: string, limits = LIMITS): string => {
  try {
    checkHeaderLimits(Buffer.from(raw, 'latin1'), limits);
    return 'ok';
  } catch (error) {
    if (!isAppError(error) || error.code !== 'too_large') throw error;
    return error.message;
  }
};

/** A header of exactly `bytes` bytes, the empty line included, in `lines` lines. */
const headerOf = (bytes: number, lines: number, eol = '\r\n'): string => {
  const first = 'Subject: x';
  const folds = Array.from({ length: lines - 2 }, () => ' y');
  const text = `${[first, ...folds].join(eol)}${eol}`;
  const pad = bytes - text.length - eol.length;
  return `${first}${'z'.repeat(pad)}${eol}${folds.join(eol)}${folds.length > 0 ? eol : ''}${eol}`;
};

t.test('bytes and lines are counted up to and with the empty line, exact at the limit', async (t) => {
  const body = 'body line\r\n'.repeat(1000);
  t.equal(headerOf(2048, 50).length, 2048);
  t.equal(verdict(headerOf(2048, 50) + body), 'ok', 'exactly the byte limit');
  t.equal(verdict(headerOf(2049, 50) + body), 'the message header is over the 2048-byte limit');
  t.equal(verdict(headerOf(1000, 100) + body), 'ok', 'exactly the line limit');
  t.equal(verdict(headerOf(1000, 101) + body), 'the message header has more than 100 lines');
  t.equal(verdict(headerOf(1000, 101, '\n') + body), 'the message header has more than 100 lines', 'bare LF lines count the same');
  t.equal(verdict(headerOf(2049, 50, '\n') + body), 'the message header is over the 2048-byte limit');
  t.equal(verdict(`Subject: x\r\n\r\n${'long body line\r\n'.repeat(100_000)}`), 'ok', 'the body is not the header');
  t.equal(verdict('\r\nno header at all\r\n'.repeat(500)), 'ok');
  t.equal(verdict(`Subject: ${'x'.repeat(2000)}`), 'ok', 'no empty line: all header, within the limit');
  t.equal(verdict(`Subject: ${'x'.repeat(2100)}`), 'the message header is over the 2048-byte limit', 'no empty line: all header, over it');
  t.equal(verdict(`X-One-Line: ${'x'.repeat(5_000_000)}\r\n\r\nbody`), 'the message header is over the 2048-byte limit', 'one long line');
});

const overLimit = (lines: number): Buffer =>
  Buffer.from(`From: someone@example.org\r\nSubject: folded\r\nX-Folded: a\r\n${' b\r\n'.repeat(lines)}\r\nbody\r\n`);

t.test('the MX and submission answer 552 5.3.4 and store nothing; APPEND answers NO [LIMIT]', async (t) => {
  const app = await startApp(t, { smtp: { maxHeaderBytes: 4096, maxHeaderLines: 200 } });
  const agent = await app.register();
  await app.app.services.accounts.addCredits(agent.email, 10);
  const refused = await smtpSendRaw(app.smtpPort, 'someone@example.org', [agent.email], overLimit(300)).then(
    () => null,
    (error: { responseCode?: number; response?: string }) => error,
  );
  t.match(refused, { responseCode: 552, response: /^552 5\.3\.4 the message header has more than 200 lines/ }, 'lines, over the MX');
  const tooLong = Buffer.from(`From: someone@example.org\r\nX-Long: ${'x'.repeat(5000)}\r\n\r\nbody\r\n`);
  const refusedBytes = await smtpSendRaw(app.smtpPort, 'someone@example.org', [agent.email], tooLong).then(
    () => null,
    (error: { responseCode?: number; response?: string }) => error,
  );
  t.match(refusedBytes, { responseCode: 552, response: /5\.3\.4 the message header is over the 4096-byte limit/ }, 'bytes, over the MX');
  const accepted = await smtpSendRaw(app.smtpPort, 'someone@example.org', [agent.email], overLimit(150));
  t.match(accepted.response, /^250 /, 'within the limits');
  const inbox = await app.api('GET', '/api/v1/agent/inbox', { key: agent.apiKey });
  t.equal(inbox.body.emails.length, 1, 'only the message within the limits is stored');

  const transport = submissionTransport(t, app.submissionPort, agent.email, agent.apiKey);
  const submitted = Buffer.from(`From: ${agent.email}\r\nTo: far@example.com\r\nSubject: s\r\nX-Folded: a\r\n${' b\r\n'.repeat(300)}\r\nbody\r\n`);
  const refusedSubmission = await transport.sendMail({ envelope: { from: agent.email, to: ['far@example.com'] }, raw: submitted }).then(
    () => null,
    (error: { responseCode?: number; response?: string }) => error,
  );
  t.match(refusedSubmission, { responseCode: 552, response: /5\.3\.4 the message header has more than 200 lines/ }, 'submission');
  const sent = await app.api('GET', '/api/v1/agent/inbox?folder=Sent', { key: agent.apiKey });
  t.equal(sent.body.emails.length, 0, 'nothing sent or kept');
  t.equal((await app.api('GET', '/api/v1/agent/balance', { key: agent.apiKey })).body.credits, 10, 'nothing charged');

  const imap = await rawImap(t, app.imapPort);
  const appended = overLimit(300);
  imap.send(`a1 LOGIN ${agent.email} ${agent.apiKey}\r\na2 APPEND INBOX {${appended.length}+}\r\n`);
  imap.send(Buffer.concat([appended, Buffer.from('\r\n')]));
  t.match(await imap.read(/^a2 /m), /^a2 NO \[LIMIT\] the message header has more than 200 lines/m, 'APPEND');
  const within = overLimit(150);
  imap.send(`a3 APPEND INBOX {${within.length}+}\r\n`);
  imap.send(Buffer.concat([within, Buffer.from('\r\n')]));
  t.match(await imap.read(/^a3 /m), /^a3 OK /m, 'APPEND within the limits');
});
