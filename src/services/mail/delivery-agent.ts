import type { AuthenticationVerdict } from '../../core/authentication.js';
import { AppError } from '../../core/errors.js';
import type { BlocklistAnswer, JunkEvidence, JunkVerdict } from '../../core/junk.js';
import { withFieldsOnTop } from '../../core/message-intake.js';
import type { ParsedMessage, ParseWants } from '../../core/parsed-message.js';
import type { StagedValues } from '../../core/stored-message.js';
import type { TlsSessionInfo } from '../../core/tls.js';
import { withoutForgedAuthenticationResults } from '../../mime/authentication-results.js';
import { withPrefix } from '../../mime/structure.js';
import type { MailboxRecord } from '../../store/accounts.js';
import { INBOX, JUNK, type MailboxService } from './mailbox.js';

/** How a message reached this hop: what each of its copies records. */
export interface Hop {
  /** Our Received field for one recipient (RFC 5321 section 4.4), CRLF-terminated. */
  traceFor(recipient: string): string;
  /** Our Authentication-Results field (RFC 8601), CRLF-terminated. */
  verdictField: string;
  /** The verdict stored with each copy; absent when the checks are off. */
  verdict: AuthenticationVerdict | undefined;
  /** Over SMTP: what the session negotiated (null in the clear); absent for mail that never crossed SMTP. */
  tls?: TlsSessionInfo | null;
  /** What the DNS blocklists said of the connecting address: null when they ran out of time; absent when none was asked (mail sent here). */
  blocklists?: BlocklistAnswer | null;
}

/** Mail that never crossed SMTP has no connecting address for the blocklists: none lists it. */
const NOT_ASKED: BlocklistAnswer = { listed: [], unanswered: [] };

/** Judges a copy for its mailbox (src/services/junk/filter.ts); the agent files junk in the Junk folder. */
export interface CopyJudge {
  judge(mailbox: MailboxRecord, evidence: JunkEvidence): Promise<JunkVerdict>;
}

/** One copy per mailbox, ready to commit, and the recipients it stands for. */
export interface MailboxCopy {
  mailbox: MailboxRecord;
  recipients: string[];
  /** Our trace field and verdict, which go on top of the message in this copy. */
  fields: Buffer;
  parsed: ParsedMessage;
  /** The junk filter's verdict for this mailbox; absent with the filter off. */
  junk?: JunkVerdict;
  /** What `stage` wrote of this copy ahead of the commit. */
  staged?: StagedValues;
}

export interface PreparedCopies {
  /** What every copy stores below its own fields: the message, any forged verdict of ours cut out. */
  sent: Buffer;
  /** Free bytes the caller keeps before `sent`, where a copy's fields are written without copying the message. */
  room: number;
  copies: MailboxCopy[];
  /** Recipients with no mailbox (removed since their message was accepted). */
  missing: string[];
  hop: Hop;
}

/**
 * The one way into a mailbox, whoever brings the message (the MX, the inbound queue, a send
 * to a local address): like an MTA's local delivery agent, one copy per mailbox however many
 * of its addresses and aliases the message names, each with our trace field and our verdict on
 * top (both are trace fields of this hop, RFC 8601 section 4), any forged verdict of ours cut
 * out (section 5), filed in INBOX, or in Junk when the junk filter judges it so.
 */
export class MailboxDeliveryAgent {
  constructor(
    private readonly mailboxes: MailboxService,
    /** Our authserv-id (`smtp.hostname`): a field of another hop claiming it is forged. */
    private readonly authservId: string,
    /** None: everything is filed in INBOX. */
    private readonly junk?: CopyJudge,
  ) {}

  /** What the parse of a message for prepare() computes: the junk filter's features when there is a filter. */
  get parseWants(): ParseWants {
    return { junkFeatures: this.junk !== undefined };
  }

  /** True when `address` names a mailbox here (an alias, a postmaster address). */
  async knows(address: string): Promise<boolean> {
    return (await this.mailboxes.mailboxForRecipient(address)) !== null;
  }

  /**
   * The copies of `raw` for `recipients`. A recipient with no mailbox is missing, or an error
   * when `missing` is `'refuse'` (the MX checked each at RCPT, so one gone now is a fault).
   */
  async prepare(raw: Buffer, parsed: ParsedMessage, hop: Hop, recipients: readonly string[], missing: 'refuse' | 'skip', room = 0): Promise<PreparedCopies> {
    const sent = withoutForgedAuthenticationResults(raw, this.authservId);
    const verdict = Buffer.from(hop.verdictField, 'latin1');
    const byMailbox = new Map<string, { mailbox: MailboxRecord; recipients: string[] }>();
    const unknown: string[] = [];
    for (const recipient of recipients) {
      const mailbox = await this.mailboxes.mailboxForRecipient(recipient);
      if (!mailbox) {
        if (missing === 'refuse') throw new AppError('not_found', `no mailbox for ${recipient}`);
        unknown.push(recipient);
        continue;
      }
      const copy = byMailbox.get(mailbox.id);
      if (copy) copy.recipients.push(recipient);
      else byMailbox.set(mailbox.id, { mailbox, recipients: [recipient] });
    }
    const copies = await Promise.all(
      [...byMailbox.values()].map(async ({ mailbox, recipients: named }) => {
        const trace = Buffer.from(hop.traceFor(named[0]), 'utf8');
        // The stored body's offsets are into the stored bytes, which start with our two fields; with
        // forged fields cut out the parse no longer matches, and the body backfill builds it anew.
        const body = sent === raw && parsed.body ? withPrefix(parsed.body, trace.length + verdict.length) : null;
        const junk = await this.junk?.judge(mailbox, {
          features: parsed.junkFeatures,
          from: parsed.from?.email.toLowerCase() ?? null,
          authentication: hop.verdict,
          blocklists: hop.blocklists === undefined ? NOT_ASKED : hop.blocklists,
        });
        return { mailbox, recipients: named, fields: Buffer.concat([trace, verdict]), parsed: { ...parsed, body }, ...(junk && { junk }) };
      }),
    );
    return { sent, room: sent === raw ? room : 0, copies, missing: unknown, hop };
  }

  /**
   * Before the commit: each copy's parts too large for it, written ahead (src/services/mail/staging.ts).
   * Each copy's fields are written into the room in turn, the last one's bytes copied by then.
   */
  async stage(prepared: PreparedCopies): Promise<PreparedCopies> {
    for (const copy of prepared.copies) {
      const staged = await this.mailboxes.staging.stage(withFieldsOnTop(prepared.sent, prepared.room, copy.fields), copy.parsed.body);
      if (staged) copy.staged = staged;
    }
    return prepared;
  }

  /** Inside the commit; `receivedAt` is the time of the 250 for a message that waited in the inbound queue. */
  async append(prepared: PreparedCopies, receivedAt?: number): Promise<void> {
    const { hop } = prepared;
    for (const copy of prepared.copies) {
      // Each copy's fields are written into the room in turn: the store has copied the last one's bytes by then.
      const raw = withFieldsOnTop(prepared.sent, prepared.room, copy.fields);
      await this.mailboxes.append(copy.mailbox, copy.junk?.junk ? JUNK : INBOX, raw, copy.parsed, {
        ...(hop.tls !== undefined && { arrival: { tls: hop.tls } }),
        authentication: hop.verdict,
        ...(copy.junk && { junk: copy.junk }),
        ...(receivedAt !== undefined && { receivedAt }),
        ...(copy.staged && { staged: copy.staged }),
      });
    }
  }
}
