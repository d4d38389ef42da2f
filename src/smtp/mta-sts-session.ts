import type { Logger } from '../core/logger.js';
import type { NextHopHost, Route, SmtpAnswer } from '../core/outbound.js';
import { peerVerification, type SMTPConnection } from '../mime/nodemailer.js';

/**
 * A session the recipient domain's enforced MTA-STS policy does not allow (RFC 8461 section
 * 4.2): no STARTTLS, or a certificate that does not verify for the MX name. It carries the
 * answer this side gives, so the recipient is deferred with a 4.7.5 reason (RFC 3463
 * "cryptographic failure", as Postfix reports TLS policy failures) and the message waits for
 * a server that satisfies the policy (section 5.1).
 */
export class PolicyRefusal extends Error {
  readonly answer: SmtpAnswer;

  constructor(route: Route, host: NextHopHost, cause: Error & { response?: string }) {
    const said = cause.response ? ` (the server said: ${cause.response.trim()})` : '';
    const policy = route.mtaSts ? `the MTA-STS policy of ${route.mtaSts.domain} (id ${route.mtaSts.policyId})` : 'MTA-STS';
    const diagnostic = `451 4.7.5 ${policy} requires TLS with a certificate valid for ${host.servername}: ${cause.message}${said}`.slice(0, 500);
    super(diagnostic);
    this.answer = { smtpCode: 451, enhancedCode: '4.7.5', diagnostic };
  }
}

/**
 * Testing mode (RFC 8461 section 5): the session went ahead; when enforce would have refused
 * it (no TLS, or a certificate that does not verify for the MX name) that is reported.
 */
export const reportTestingSession = (connection: SMTPConnection, route: Route, host: NextHopHost, logger: Logger | undefined): void => {
  if (!logger || route.mtaSts?.mode !== 'testing') return;
  const verified = peerVerification(connection);
  const problem = !verified ? 'no STARTTLS' : verified.authorized ? null : `certificate not valid for ${host.servername}: ${verified.error}`;
  if (!problem) return;
  logger.warn('mta-sts testing policy: enforce would refuse this session', {
    domain: route.mtaSts.domain,
    id: route.mtaSts.policyId,
    mx: host.servername,
    address: host.host,
    problem,
  });
};
