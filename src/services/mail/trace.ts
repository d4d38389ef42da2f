import type { TlsSessionInfo } from '../../core/tls.js';
import type { SubmissionVia } from '../../core/types.js';

/** What the SMTP adapter knows of a session, for the trace header. */
export interface SmtpSessionInfo {
  id: string;
  remoteAddress: string;
  heloName: string;
  /** RFC 3848 protocol type: ESMTP, ESMTPS, ESMTPA, ESMTPSA. */
  protocol: string;
  /** What the session negotiated with STARTTLS or implicit TLS; null in the clear. */
  tls: TlsSessionInfo | null;
}

/**
 * RFC 5321 section 4.4: every SMTP server that accepts a message prepends a Received
 * header. Only the literal client address is given: we do no reverse DNS lookups. Over TLS
 * the protocol is ESMTPS (RFC 3848), the version is a comment, and the cipher suite is the
 * `tls` clause RFC 8314 section 4.3 registers (after `for`, as Additional-Registered-Clauses).
 */
export const receivedHeader = (session: SmtpSessionInfo, byHost: string, recipient: string, at: Date): string => {
  const from = `from ${session.heloName || 'unknown'} ([${session.remoteAddress}])`;
  const version = session.tls ? ` (${session.tls.version})` : '';
  const by = `by ${byHost} (agentpost) with ${session.protocol}${version} id ${session.id}`;
  const tls = session.tls ? `\r\n\ttls ${session.tls.cipher}` : '';
  return `Received: ${from}\r\n\t${by}\r\n\tfor <${recipient}>${tls}; ${rfc5322Date(at)}\r\n`;
};

/**
 * The Received field of mail sent by a mailbox of this service and delivered here, which never
 * crossed SMTP into this hop: from and by are this host, the protocol says how it was
 * submitted (ESMTPA for authenticated submission, RFC 3848; HTTP for REST and MCP), and the id
 * is the submission's, which GET /api/v1/agent/outbound/{id} answers.
 */
export const submissionReceivedHeader = (via: SubmissionVia, submissionId: string, byHost: string, recipient: string, at: Date): string => {
  const protocol = via === 'smtp' ? 'ESMTPA' : 'HTTP';
  return `Received: from ${byHost} (authenticated sender, ${via})\r\n\tby ${byHost} (agentpost) with ${protocol} id ${submissionId}\r\n\tfor <${recipient}>; ${rfc5322Date(at)}\r\n`;
};

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad = (value: number): string => String(value).padStart(2, '0');

/** RFC 5322 section 3.3 date-time, in UTC. */
export const rfc5322Date = (at: Date): string =>
  `${DAYS[at.getUTCDay()]}, ${at.getUTCDate()} ${MONTHS[at.getUTCMonth()]} ${at.getUTCFullYear()} ` +
  `${pad(at.getUTCHours())}:${pad(at.getUTCMinutes())}:${pad(at.getUTCSeconds())} +0000`;
