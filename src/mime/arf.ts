import { normalizeAddress } from '../core/addresses.js';
import { headerEnd, paramOf, parseHeaderFields, parseMimeTree } from './mime-tree.js';
import { addressparser } from './nodemailer.js';
import { decodedBody, firstField, typedAddress, typeOf } from './report-parts.js';

/**
 * RFC 5965 Abuse Reporting Format (feedback-loop complaints): a top-level multipart/report
 * with report-type=feedback-report whose first part is for humans, second a
 * message/feedback-report block of header-like fields, and third the original message
 * (message/rfc822) or only its header (text/rfc822-headers). Anything else is not a
 * feedback report and is not processed (docs/operators/delivery.md, Complaints).
 */
export interface FeedbackReport {
  /** Lower-cased Feedback-Type (RFC 5965 section 3.1; values in section 7.3 and RFC 6430). */
  feedbackType: string;
  /** Original-Rcpt-To values (section 3.2), normalized; empty when the reporter left them out. */
  originalRcptTo: string[];
  /** Original-Mail-From (section 3.2): the envelope sender of the reported message. */
  originalMailFrom: string | null;
  original: OriginalHeaders;
}

/** What the reported message's own header says about where it came from and went to. */
export interface OriginalHeaders {
  /** The Message-ID with its angle brackets, as submissions store it. */
  messageId: string | null;
  /** Return-Path addresses, normalized: the receiving server wrote our envelope sender here. */
  returnPath: string[];
  /** To and Cc addresses, normalized. */
  recipients: string[];
}

/**
 * Which reports are complaints about the mail itself: `abuse` (unsolicited or abusive
 * mail) and `fraud` (phishing or fraud), both a recipient's verdict against this sender.
 * Not: `not-spam` (RFC 6430, the opposite), `virus` (a scanner's finding, not a
 * recipient's), `auth-failure` (RFC 6591, about authentication) and `other` (unknown meaning).
 */
const COMPLAINT_TYPES: ReadonlySet<string> = new Set(['abuse', 'fraud']);

export const isComplaint = (report: FeedbackReport): boolean => COMPLAINT_TYPES.has(report.feedbackType);

/** RFC 5965 section 2 item c: the original in full, or its header only (RFC 6533 global forms too). */
const ORIGINAL_TYPES: ReadonlySet<string> = new Set(['message/rfc822', 'text/rfc822-headers', 'message/global', 'message/global-headers']);

/** The parsed report, or null when the message is not an RFC 5965 feedback report. */
export const parseArf = (raw: Buffer): FeedbackReport | null => {
  const root = parseMimeTree(raw);
  const { type, subtype } = root.contentType;
  if (type !== 'multipart' || subtype !== 'report' || paramOf(root.contentType, 'report-type')?.toLowerCase() !== 'feedback-report') {
    return null;
  }
  // Section 2: the parts come in this order; a report without all three is malformed.
  const [, reportPart, originalPart] = root.children;
  if (!reportPart || !originalPart || typeOf(reportPart) !== 'message/feedback-report' || !ORIGINAL_TYPES.has(typeOf(originalPart))) {
    return null;
  }
  const fields = parseHeaderFields(decodedBody(raw, reportPart));
  const feedbackType = firstField(fields, 'feedback-type')
    ?.split(/[\s;(]/)[0]
    .toLowerCase();
  // Section 3.1: Feedback-Type, User-Agent and Version (always 1) are required.
  if (!feedbackType || !firstField(fields, 'user-agent') || firstField(fields, 'version') !== '1') return null;
  const mailFrom = firstField(fields, 'original-mail-from');
  return {
    feedbackType,
    originalRcptTo: fields
      .filter((field) => field.name === 'original-rcpt-to')
      .map((field) => bareAddress(field.value))
      .filter(Boolean),
    originalMailFrom: mailFrom ? bareAddress(mailFrom) || null : null,
    original: originalHeaders(decodedBody(raw, originalPart)),
  };
};

/** "<user@example.com>" or "rfc822; user@example.com" -> "user@example.com" (normalized); '' when not an address. */
const bareAddress = (value: string): string => {
  const address = typedAddress(value);
  return address.includes('@') ? normalizeAddress(address) : '';
};

const originalHeaders = (original: Buffer): OriginalHeaders => {
  const fields = parseHeaderFields(original.subarray(0, headerEnd(original, 0, original.length)));
  const messageId = /<[^<>\s]+>/.exec(firstField(fields, 'message-id') ?? '')?.[0] ?? null;
  const returnPath = fields
    .filter((field) => field.name === 'return-path')
    .map((field) => bareAddress(field.value))
    .filter(Boolean);
  const recipients = fields
    .filter((field) => field.name === 'to' || field.name === 'cc')
    .flatMap((field) => addressparser(field.value, { flatten: true }))
    .map((entry) => bareAddress(entry.address))
    .filter(Boolean);
  return { messageId, returnPath, recipients: [...new Set(recipients)] };
};
