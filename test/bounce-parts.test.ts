import t from 'tap';
import { bounceAddress, isBounceShaped, verifyBounceAddress } from '../src/core/bounce-token.js';
import { isInvalidMailbox, parseSmtpReply } from '../src/core/outbound.js';
import { parseDsn } from '../src/mime/dsn.js';

const secret = Buffer.from('0123456789abcdef0123456789abcdef');
const other = Buffer.from('fedcba9876543210fedcba9876543210');

t.test('bounce token: verifies its own MAC, refuses a forged or foreign one', async (t) => {
  const address = bounceAddress(secret, '5f0c0e1e-7a61-4c3c-9a49-4a9a8f1f2b3c', 'Agents.Localhost');
  t.match(address, /^bounces\+5f0c0e1e-7a61-4c3c-9a49-4a9a8f1f2b3c-[0-9a-f]{16}@agents\.localhost$/);
  t.ok(address.split('@')[0].length <= 64, 'the local part fits RFC 5321 limits');
  t.equal(verifyBounceAddress(secret, address, 'agents.localhost'), '5f0c0e1e-7a61-4c3c-9a49-4a9a8f1f2b3c');
  t.equal(verifyBounceAddress(secret, address.toUpperCase(), 'agents.localhost'), '5f0c0e1e-7a61-4c3c-9a49-4a9a8f1f2b3c', 'case folded by a remote MTA');
  t.equal(verifyBounceAddress(other, address, 'agents.localhost'), null, 'another secret');
  const forged = address.replace(/-[0-9a-f]{16}@/, '-0000000000000000@');
  t.equal(verifyBounceAddress(secret, forged, 'agents.localhost'), null, 'forged MAC');
  const swapped = bounceAddress(secret, 41, 'agents.localhost').replace('bounces+41-', 'bounces+42-');
  t.equal(verifyBounceAddress(secret, swapped, 'agents.localhost'), null, 'MAC of another id');
  t.equal(verifyBounceAddress(secret, address, 'other.test'), null, 'another domain');
  t.ok(isBounceShaped(forged, 'agents.localhost'));
  t.notOk(isBounceShaped('agent-x@agents.localhost', 'agents.localhost'));
});

t.test('SMTP replies: code, RFC 3463 enhanced code and diagnostic', async (t) => {
  t.same(parseSmtpReply('550 5.1.1 <a@b.test>: Recipient address rejected'), {
    smtpCode: 550,
    enhancedCode: '5.1.1',
    diagnostic: '550 5.1.1 <a@b.test>: Recipient address rejected',
  });
  t.same(parseSmtpReply('451 Try again later'), { smtpCode: 451, diagnostic: '451 Try again later' });
  t.same(parseSmtpReply('550 user unknown (5.1.1)').enhancedCode, '5.1.1', 'a 550 naming 5.1.1 in its text');
  t.ok(isInvalidMailbox(parseSmtpReply('550-5.1.1 The email account does not exist\n550 5.1.1 more')));
  t.notOk(isInvalidMailbox(parseSmtpReply('550 5.7.1 policy')));
  t.notOk(isInvalidMailbox(parseSmtpReply('450 4.1.1 try later')));
});

const dsn = (status: string, partType = 'message/delivery-status', reportType = 'delivery-status') =>
  Buffer.from(
    [
      'From: MAILER-DAEMON@mx.example.test',
      'To: bounces+x-0123456789abcdef@agents.localhost',
      'Subject: Undelivered Mail Returned to Sender',
      'MIME-Version: 1.0',
      `Content-Type: multipart/report; report-type=${reportType};`,
      '\tboundary="BOUND"',
      '',
      '--BOUND',
      'Content-Type: text/plain',
      '',
      'The mail could not be delivered.',
      '',
      '--BOUND',
      `Content-Type: ${partType}`,
      '',
      'Reporting-MTA: dns; mx.example.test',
      '',
      'Final-Recipient: rfc822; Nobody@example.test',
      'Action: failed',
      `Status: ${status}`,
      'Diagnostic-Code: smtp; 550 5.1.1 <nobody@example.test>: Recipient address',
      ' rejected: User unknown',
      '',
      '--BOUND',
      'Content-Type: text/rfc822-headers',
      '',
      'Subject: hi',
      '',
      '--BOUND--',
      '',
    ].join('\r\n'),
  );

t.test('DSN parsing (RFC 3464)', async (t) => {
  t.same(parseDsn(dsn('5.1.1')), {
    reportingMta: 'dns; mx.example.test',
    recipients: [
      {
        finalRecipient: 'nobody@example.test',
        action: 'failed',
        status: '5.1.1',
        diagnostic: 'smtp; 550 5.1.1 <nobody@example.test>: Recipient address rejected: User unknown',
      },
    ],
  });
  t.equal(parseDsn(dsn('4.2.2 (mailbox full)'))?.recipients[0].status, '4.2.2');
  t.equal(parseDsn(dsn('5.1.1', 'text/plain')), null, 'no delivery-status part');
  t.equal(parseDsn(dsn('5.1.1', 'message/delivery-status', 'disposition-notification')), null, 'another report type');
  t.equal(parseDsn(Buffer.from('Subject: Undelivered Mail Returned to Sender\r\n\r\n550 5.1.1 user unknown\r\n')), null, 'bounce-shaped text');
});
