import t from 'tap';
import type { RecipientKind, RecipientStatus } from '../src/core/types.js';
import { isComplaint, parseArf } from '../src/mime/arf.js';
import { complainantOf } from '../src/services/delivery/complaints.js';
import type { RecipientRecord } from '../src/store/submissions.js';
import { arfReport } from './helpers/arf.js';

const bounce = 'bounces+7-0123456789abcdef@agents.localhost';
const original = [
  `Return-Path: <${bounce.toUpperCase()}>`,
  'Message-ID: <m1@agents.localhost>',
  'From: agent@agents.localhost',
  'To: "Reader, One" <One@remote.test>, two@remote.test',
  'Cc: three@other.test',
  'Subject: hello',
  '',
  'body',
  '',
].join('\r\n');

const parse = (options: Partial<Parameters<typeof arfReport>[0]> = {}) => parseArf(Buffer.from(arfReport({ to: bounce, original, ...options })));

t.test('RFC 5965 report: type, Original-Rcpt-To, Original-Mail-From and the original header', async (t) => {
  t.same(parse({ originalRcptTo: ['Two@Remote.test'], originalMailFrom: bounce }), {
    feedbackType: 'abuse',
    originalRcptTo: ['two@remote.test'],
    originalMailFrom: bounce,
    original: {
      messageId: '<m1@agents.localhost>',
      returnPath: [bounce],
      recipients: ['one@remote.test', 'two@remote.test', 'three@other.test'],
    },
  });
  const headersOnly = parse({ headersOnly: true, original: original.split('\r\n\r\n')[0] });
  t.match(headersOnly, { originalRcptTo: [], originalMailFrom: null, original: { messageId: '<m1@agents.localhost>' } });
  const encoded = arfReport({ to: bounce, original, headersOnly: true })
    .replace('Content-Type: text/rfc822-headers', 'Content-Type: text/rfc822-headers\r\nContent-Transfer-Encoding: base64')
    .replace(original.replace(/\r\n$/, ''), Buffer.from(original).toString('base64').replace(/.{76}/g, '$&\r\n'));
  t.notMatch(encoded, /Message-ID: <m1/, 'the header is only in base64');
  t.equal(parseArf(Buffer.from(encoded))?.original.messageId, '<m1@agents.localhost>', 'a base64-encoded header part');
});

t.test('complaint types: abuse and fraud; not-spam, virus and other are not', async (t) => {
  const kinds = ['abuse', 'fraud', 'not-spam', 'virus', 'other', 'auth-failure'];
  t.same(
    kinds.filter((kind) => isComplaint(parse({ feedbackType: kind })!)),
    ['abuse', 'fraud'],
  );
  t.equal(parse({ feedbackType: 'Abuse' })?.feedbackType, 'abuse');
});

t.test('malformed or other reports are not feedback reports', async (t) => {
  t.equal(parse({ withoutOriginal: true }), null, 'no third part');
  t.equal(parse({ version: '2' }), null, 'an unknown version');
  const report = arfReport({ to: bounce, original });
  t.equal(parseArf(Buffer.from(report.replace('User-Agent: SomeGenerator/1.0\r\n', ''))), null, 'no User-Agent');
  t.equal(parseArf(Buffer.from(report.replace('Feedback-Type: abuse\r\n', ''))), null, 'no Feedback-Type');
  t.equal(parseArf(Buffer.from(report.replace('report-type=feedback-report', 'report-type=delivery-status'))), null, 'a DSN');
  t.equal(parseArf(Buffer.from(report.replace('Content-Type: message/feedback-report', 'Content-Type: text/plain'))), null, 'second part of another type');
  t.equal(parseArf(Buffer.from(report.replace('Content-Type: message/rfc822', 'Content-Type: text/plain'))), null, 'third part of another type');
  t.equal(parseArf(Buffer.from('Subject: spam complaint\r\n\r\nFeedback-Type: abuse\r\n')), null, 'report-shaped text');
});

const row = (id: number, address: string, status: RecipientStatus = 'delivered', kind: RecipientKind = 'to'): RecipientRecord => ({
  id,
  submissionId: 's',
  accountId: 'a',
  keyId: 'k',
  address,
  domain: address.split('@')[1],
  kind,
  status,
  creditReserved: true,
  refunded: false,
  attempts: 1,
  nextAttemptAt: null,
  lastSmtpCode: 250,
  lastEnhancedCode: null,
  lastDiagnostic: null,
  createdAt: 0,
  updatedAt: 0,
});

t.test('the complainant is attributed only when certain', async (t) => {
  const report = parse()!;
  const named = (rcpt: string[], to: string[]) => ({ ...report, originalRcptTo: rcpt, original: { ...report.original, recipients: to } });
  const one = row(1, 'one@remote.test');
  const two = row(2, 'two@remote.test');
  t.equal(complainantOf(named(['two@remote.test'], []), [one, two]), two, 'Original-Rcpt-To names one');
  t.equal(complainantOf(named(['one@remote.test', 'two@remote.test'], []), [one, two]), null, 'it names two');
  t.equal(complainantOf(named(['stranger@remote.test'], []), [one]), null, 'it names a stranger, even for one recipient');
  t.equal(complainantOf(named(['two@remote.test'], []), [one, row(2, 'two@remote.test', 'failed')]), null, 'a recipient it never reached');
  t.equal(complainantOf(named([], ['two@remote.test']), [one, two]), two, 'the header names one (the reporter rewrote it)');
  t.equal(complainantOf(named([], ['one@remote.test', 'two@remote.test']), [one, two]), null, 'the header names both');
  t.equal(
    complainantOf(named([], ['two@remote.test']), [two, row(3, 'hidden@remote.test', 'delivered', 'bcc')]),
    null,
    'a Bcc recipient could have complained',
  );
  t.equal(complainantOf(named([], []), [row(4, 'x@remote.test', 'unresolved'), row(5, 'y@remote.test', 'failed')])?.id, 4, 'redacted, one recipient reached');
  t.equal(complainantOf(named([], []), [one, two]), null, 'redacted, several reached');
});
