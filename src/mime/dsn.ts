/**
 * RFC 3464 delivery status notifications: a top-level multipart/report with
 * report-type=delivery-status whose message/delivery-status part holds one per-message
 * block and one block per recipient (Final-Recipient, Action, Status, Diagnostic-Code).
 * Anything else is not a DSN and is not processed (docs/operators/delivery.md, Bounces).
 */
import { paramOf, parseHeaderText, parseMimeTree, type HeaderField } from './mime-tree.js';
import { decodedBody, firstField, typedAddress, typeOf } from './report-parts.js';

export interface DsnRecipient {
  finalRecipient: string;
  /** failed, delayed, delivered, relayed or expanded (RFC 3464 section 2.3.3). */
  action: string;
  /** RFC 3463 enhanced status, e.g. 5.1.1. */
  status: string;
  diagnostic?: string;
}

export interface Dsn {
  reportingMta?: string;
  recipients: DsnRecipient[];
}

const STATUS = /^([245])\.(\d{1,3})\.(\d{1,3})/;

const toRecipient = (fields: readonly HeaderField[]): DsnRecipient | null => {
  const final = firstField(fields, 'final-recipient');
  const action = firstField(fields, 'action');
  const status = STATUS.exec(firstField(fields, 'status') ?? '');
  if (!final || !action || !status) return null;
  const recipient: DsnRecipient = { finalRecipient: typedAddress(final).toLowerCase(), action: action.toLowerCase(), status: status[0] };
  const diagnostic = firstField(fields, 'diagnostic-code');
  if (diagnostic) recipient.diagnostic = diagnostic.slice(0, 500);
  return recipient;
};

/** RFC 3464 section 2.1 (and RFC 6533 for the UTF-8 form). */
const STATUS_TYPES: ReadonlySet<string> = new Set(['message/delivery-status', 'message/global-delivery-status']);

/** The parsed report, or null when the message is not an RFC 3464 DSN. */
export const parseDsn = (raw: Buffer): Dsn | null => {
  const root = parseMimeTree(raw);
  if (typeOf(root) !== 'multipart/report' || paramOf(root.contentType, 'report-type')?.toLowerCase() !== 'delivery-status') return null;
  const statusPart = root.children.find((part) => STATUS_TYPES.has(typeOf(part)));
  if (!statusPart) return null;
  // One per-message block, then one block per recipient, separated by blank lines.
  const blocks = decodedBody(raw, statusPart)
    .toString('utf8')
    .split(/\r?\n(?:[ \t]*\r?\n)+/)
    .map((block) => block.trim())
    .filter(Boolean);
  if (blocks.length < 2) return null;
  const recipients = blocks
    .slice(1)
    .map((block) => toRecipient(parseHeaderText(block)))
    .filter((r): r is DsnRecipient => r !== null);
  if (recipients.length === 0) return null;
  const reportingMta = firstField(parseHeaderText(blocks[0]), 'reporting-mta');
  return reportingMta ? { reportingMta, recipients } : { recipients };
};
