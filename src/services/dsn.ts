/**
 * RFC 3464 delivery status notifications: a top-level multipart/report with
 * report-type=delivery-status whose message/delivery-status part holds one per-message
 * block and one block per recipient (Final-Recipient, Action, Status, Diagnostic-Code).
 * Anything else is not a DSN and is not processed (contract: unverified bounces are ignored).
 */
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

type Fields = Map<string, string>;

/** Header fields of one block, unfolded (RFC 5322 section 2.2.3), names lower-cased. */
const parseFields = (block: string): Fields => {
  const fields: Fields = new Map();
  const unfolded = block.replace(/\r?\n[ \t]+/g, ' ');
  for (const line of unfolded.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!fields.has(name)) fields.set(name, line.slice(colon + 1).trim());
  }
  return fields;
};

const splitHead = (entity: string): { head: string; body: string } => {
  const match = /\r?\n\r?\n/.exec(entity);
  if (!match) return { head: entity, body: '' };
  return { head: entity.slice(0, match.index), body: entity.slice(match.index + match[0].length) };
};

/** `type/subtype; a=b; c="d"` -> the lower-cased type and its parameters. */
const parseContentType = (value: string | undefined): { type: string; params: Map<string, string> } => {
  const params = new Map<string, string>();
  const [type = '', ...rest] = (value ?? 'text/plain').split(';');
  for (const part of rest) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    params.set(part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1'));
  }
  return { type: type.trim().toLowerCase(), params };
};

const decodeBody = (body: string, encoding: string | undefined): string => {
  const kind = (encoding ?? '7bit').trim().toLowerCase();
  if (kind === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (kind === 'quoted-printable') {
    return body.replace(/=\r?\n/g, '').replace(/=([0-9A-Fa-f]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  }
  return body;
};

/** "rfc822; user@example.com" -> "user@example.com" (RFC 3464 section 2.3.2). */
const addressOf = (value: string): string => {
  const semi = value.indexOf(';');
  return (semi >= 0 ? value.slice(semi + 1) : value).trim().replace(/^<(.*)>$/, '$1').toLowerCase();
};

const STATUS = /^([245])\.(\d{1,3})\.(\d{1,3})/;

const toRecipient = (fields: Fields): DsnRecipient | null => {
  const final = fields.get('final-recipient');
  const action = fields.get('action');
  const status = STATUS.exec(fields.get('status') ?? '');
  if (!final || !action || !status) return null;
  const recipient: DsnRecipient = { finalRecipient: addressOf(final), action: action.toLowerCase(), status: status[0] };
  const diagnostic = fields.get('diagnostic-code');
  if (diagnostic) recipient.diagnostic = diagnostic.slice(0, 500);
  return recipient;
};

/** The parsed report, or null when the message is not an RFC 3464 DSN. */
export const parseDsn = (raw: Buffer): Dsn | null => {
  const { head, body } = splitHead(raw.toString('utf8'));
  const contentType = parseContentType(parseFields(head).get('content-type'));
  const boundary = contentType.params.get('boundary');
  if (contentType.type !== 'multipart/report' || contentType.params.get('report-type')?.toLowerCase() !== 'delivery-status' || !boundary) {
    return null;
  }
  for (const part of body.split(`--${boundary}`).slice(1)) {
    if (part.startsWith('--')) break;
    const entity = splitHead(part.replace(/^[ \t]*\r?\n/, ''));
    const fields = parseFields(entity.head);
    const type = parseContentType(fields.get('content-type')).type;
    if (type !== 'message/delivery-status' && type !== 'message/global-delivery-status') continue;
    const blocks = decodeBody(entity.body, fields.get('content-transfer-encoding'))
      .split(/\r?\n(?:[ \t]*\r?\n)+/)
      .map((block) => block.trim())
      .filter(Boolean);
    if (blocks.length < 2) return null;
    const recipients = blocks.slice(1).map((block) => toRecipient(parseFields(block))).filter((r): r is DsnRecipient => r !== null);
    if (recipients.length === 0) return null;
    const reportingMta = parseFields(blocks[0]).get('reporting-mta');
    return reportingMta ? { reportingMta, recipients } : { recipients };
  }
  return null;
};
