// The pure parts of inbound authentication: our Authentication-Results field, the removal of
// fields that claim to be ours (RFC 8601 section 5), and the trust rule.
import t from 'tap';
import { bestDkim, judge, type AuthenticationResults } from '../src/core/authentication.js';
import { authenticationResultsField, authservIdOf, withoutForgedAuthenticationResults } from '../src/mime/authentication-results.js';

const message = (header: string) => Buffer.from(`${header}\r\n\r\nAuthentication-Results: mx.here.test; body line\r\n`, 'latin1');

t.test('fields naming our authserv-id are removed, every other byte stays', async (t) => {
  const header = [
    'Authentication-Results: mx.here.test; dmarc=pass header.from=bank.test',
    'Received: from a by b',
    'authentication-results :  (a comment (nested)) MX.HERE.TEST;',
    '\tspf=pass smtp.mailfrom=bank.test',
    'Authentication-Results: "mx.here.test" 1; dkim=pass',
    'Authentication-Results: other.example; dkim=pass header.d=bank.test',
    'Authentication-Results: mx.here.test.evil; dkim=pass',
    'Subject: =?utf-8?q?caf=C3=A9?= \xe9',
  ].join('\r\n');
  const out = withoutForgedAuthenticationResults(message(header), 'mx.here.test').toString('latin1');
  t.equal(
    out,
    `${[
      'Received: from a by b',
      'Authentication-Results: other.example; dkim=pass header.d=bank.test',
      'Authentication-Results: mx.here.test.evil; dkim=pass',
      'Subject: =?utf-8?q?caf=C3=A9?= \xe9',
    ].join('\r\n')}\r\n\r\nAuthentication-Results: mx.here.test; body line\r\n`,
    'folded, commented, quoted and differently cased forms go; the body is never touched',
  );

  const clean = message('From: a@b.test\r\nSubject: hi');
  t.equal(withoutForgedAuthenticationResults(clean, 'mx.here.test'), clean, 'nothing to remove: the same buffer');
  const lf = Buffer.from('Authentication-Results: mx.here.test; x\nFrom: a@b.test\n\nbody\n');
  t.equal(withoutForgedAuthenticationResults(lf, 'mx.here.test').toString(), 'From: a@b.test\n\nbody\n', 'bare LF line ends too');
});

t.test('the authserv-id of a field value', async (t) => {
  t.equal(authservIdOf(' example.com; spf=pass'), 'example.com');
  t.equal(authservIdOf(' (c) Example.COM 1; none'), 'example.com');
  t.equal(authservIdOf(' "quoted\\"id"; none'), 'quoted"id');
  t.equal(authservIdOf(' (unclosed'), null);
});

t.test('our field: one resinfo per line; CR and LF from the message cannot start a field', async (t) => {
  t.equal(
    authenticationResultsField('mx.here.test', ['spf=pass smtp.mailfrom=a@b.test', 'dkim=none']),
    'Authentication-Results: mx.here.test;\r\n\tspf=pass smtp.mailfrom=a@b.test;\r\n\tdkim=none\r\n',
  );
  t.equal(
    authenticationResultsField('mx.here.test', ['spf=pass (x\r\nBcc: victim@x.test)']),
    'Authentication-Results: mx.here.test;\r\n\tspf=pass (x Bcc: victim@x.test)\r\n',
  );
  t.equal(authenticationResultsField('mx.here.test', []), 'Authentication-Results: mx.here.test; none\r\n', 'RFC 8601 no-result');
});

t.test('the trust rule', async (t) => {
  const base: AuthenticationResults = { spf: 'none', dkim: 'none', dmarc: 'none', arc: 'none' };
  const trust = (results: Partial<AuthenticationResults>) => judge({ ...base, ...results }, 'sender.test').trust;
  t.equal(trust({ dmarc: 'pass', spf: 'fail' }), 'verified', 'DMARC pass wins: one aligned pass is enough');
  t.equal(trust({ dmarc: 'fail', spf: 'pass', dkim: 'pass' }), 'failed', 'passes for other domains do not save a DMARC fail');
  t.equal(trust({ spf: 'fail' }), 'suspicious');
  t.equal(trust({ dkim: 'fail' }), 'suspicious');
  t.equal(trust({ spf: 'softfail' }), 'unverified', 'softfail alone is not suspicious');
  t.equal(trust({ spf: 'pass', dkim: 'pass' }), 'unverified', 'passes without DMARC do not vouch for the From domain');
  t.equal(trust({ dmarc: 'temperror' }), 'unverified');
  t.match(judge({ ...base, dmarc: 'temperror' }, 'sender.test').reason, /DNS lookups for sender\.test failed/);
  t.match(judge({ ...base, dmarc: 'fail' }, 'bank.test').reason, /bank\.test publishes DMARC/);
  t.equal(bestDkim(['fail', 'pass']), 'pass');
  t.equal(bestDkim(['neutral', 'fail']), 'fail');
  t.equal(bestDkim([]), 'none');
});
