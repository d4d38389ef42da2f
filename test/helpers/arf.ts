/** Parts of an RFC 5965 feedback report a test can vary. */
export interface ArfOptions {
  /** Envelope recipient the report is mailed to (also its To header). */
  to: string;
  feedbackType?: string;
  /** Original-Rcpt-To fields; none when omitted (a redacted report). */
  originalRcptTo?: string[];
  originalMailFrom?: string;
  /** The reported message (or only its header), as the receiving server stored it. */
  original: string;
  /** text/rfc822-headers instead of message/rfc822. */
  headersOnly?: boolean;
  /** Leave out the third part (malformed). */
  withoutOriginal?: boolean;
  version?: string;
}

/** A feedback-loop report as a mailbox provider sends it (RFC 5965 section 2, the example in appendix B). */
export const arfReport = (options: ArfOptions): string => {
  const fields = [
    `Feedback-Type: ${options.feedbackType ?? 'abuse'}`,
    'User-Agent: SomeGenerator/1.0',
    `Version: ${options.version ?? '1'}`,
    ...(options.originalMailFrom ? [`Original-Mail-From: <${options.originalMailFrom}>`] : []),
    ...(options.originalRcptTo ?? []).map((address) => `Original-Rcpt-To: <${address}>`),
    'Arrival-Date: Thu, 8 Mar 2026 14:00:00 EDT',
    'Reporting-MTA: dns; mail.remote.test',
    'Source-IP: 192.0.2.1',
  ];
  const original = options.withoutOriginal
    ? []
    : [
        '--arf',
        `Content-Type: ${options.headersOnly ? 'text/rfc822-headers' : 'message/rfc822'}`,
        'Content-Disposition: inline',
        '',
        options.original.replace(/\r?\n$/, ''),
      ];
  return [
    'From: <abusedesk@remote.test>',
    `To: <${options.to}>`,
    'Subject: FW: complaint',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=feedback-report;',
    '\tboundary="arf"',
    '',
    '--arf',
    'Content-Type: text/plain; charset="US-ASCII"',
    'Content-Transfer-Encoding: 7bit',
    '',
    'This is an email abuse report for an email message received from IP 192.0.2.1.',
    '',
    '--arf',
    'Content-Type: message/feedback-report',
    '',
    ...fields,
    '',
    ...original,
    '--arf--',
    '',
  ].join('\r\n');
};

/** The header of a message, up to the blank line. */
export const headerOf = (raw: string): string => raw.slice(0, raw.search(/\r?\n\r?\n/) + 2);
