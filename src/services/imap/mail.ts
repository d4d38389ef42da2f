import { AppError } from '../../core/errors.js';
import type { ParseMail } from '../../core/parsed-message.js';
import { STORED_BODY_VERSION, type MessageStructure } from '../../core/stored-message.js';
import type { Folder, MessageFlags } from '../../core/types.js';
import { structureWire } from '../../mime/imap-notation.js';
import type { FetchRow } from '../../store/imap-rows.js';
import type { Store } from '../../store/index.js';
import type { MessageBodyService } from '../mail/bodies.js';
import type { Appended, MailboxService } from '../mail/mailbox.js';
import { rowsOf, type CopyResult, type FlagChange, type FlagResult, type MessageOps } from '../mail/message-ops.js';
import type { SearchKey } from './search-key.js';
import { searchFolder } from './search.js';
import type { ImapIdentity } from './session.js';
import { checkHeaderLimits, type HeaderLimits } from '../../mime/header-limits.js';

/** A message's ENVELOPE and BODYSTRUCTURE as a FETCH sends them. */
export interface FetchWire {
  envelope: Buffer;
  bodyStructure: Buffer;
}

/**
 * The messages of a selected folder for an IMAP session: FETCH answered from rows and the
 * stored structure (nothing parses received content here), STORE, COPY, MOVE, EXPUNGE,
 * APPEND and SEARCH.
 */
/** Messages up to this size are read with their FETCH rows; a step of 500 then holds at most 32 MB of them. */
const RAW_WITH_ROWS_MAX_BYTES = 64 * 1024;

export class ImapMailService {
  constructor(
    private readonly store: Store,
    private readonly mailboxes: MailboxService,
    private readonly ops: MessageOps,
    private readonly bodies: MessageBodyService,
    private readonly parse: ParseMail,
    /** The MX's header limits hold for APPEND too (docs/operators/inbound.md "Header limits"). */
    private readonly headerLimits: HeaderLimits,
  ) {}

  /**
   * FETCH rows of `uids` (ascending, existing ones); `wire` adds the stored ENVELOPE and
   * BODYSTRUCTURE. `withRaw`: the raw bytes of the small ones come with them (a FETCH of BODY[]
   * for many messages then reads them in the same query); larger ones are read one at a time.
   */
  async fetchRows(folder: Folder, uids: readonly number[], wire: boolean, withRaw = false): Promise<FetchRow[]> {
    const rawMaxBytes = withRaw ? RAW_WITH_ROWS_MAX_BYTES : null;
    return await rowsOf(uids, (low, high) => this.store.imap.fetchBetween(folder.id, low, high, wire, STORED_BODY_VERSION, rawMaxBytes));
  }

  /** ENVELOPE and BODYSTRUCTURE of a message stored without them yet: its stored body is built first (on a parse worker). */
  async wire(row: FetchRow): Promise<FetchWire> {
    if (row.envelopeWire && row.structureWire) return { envelope: row.envelopeWire, bodyStructure: row.structureWire };
    const wire = structureWire(await this.structure(row.rowId));
    return { envelope: Buffer.from(wire.envelope, 'latin1'), bodyStructure: Buffer.from(wire.bodyStructure, 'latin1') };
  }

  /** The MIME tree with each part's place in the raw bytes (BODY[section], BODY). */
  structure(rowId: number): Promise<MessageStructure> {
    return this.bodies.structure(rowId);
  }

  async raw(rowId: number): Promise<Buffer> {
    const raw = await this.store.messageRaw.bytes(rowId);
    if (!raw) throw new AppError('not_found', 'the message is gone');
    return raw;
  }

  /** Bytes `start` to `end` of the raw message, without reading the rest. */
  async rawRange(rowId: number, start: number, end: number): Promise<Buffer> {
    return await this.store.messageRaw.range(rowId, start, end);
  }

  async setFlags(identity: ImapIdentity, folder: Folder, uids: readonly number[], change: FlagChange, unchangedSince?: number): Promise<FlagResult> {
    return await this.ops.setFlags(identity.mailbox, folder, uids, change, unchangedSince);
  }

  async copy(identity: ImapIdentity, folder: Folder, uids: readonly number[], target: Folder): Promise<CopyResult> {
    return await this.ops.copy(identity.mailbox, folder, uids, target);
  }

  async move(identity: ImapIdentity, folder: Folder, uids: readonly number[], target: Folder): Promise<CopyResult> {
    return await this.ops.move(identity.mailbox, folder, uids, target);
  }

  async expunge(identity: ImapIdentity, folder: Folder, uids: readonly number[]): Promise<number[]> {
    return await this.ops.expunge(identity.mailbox, folder, uids);
  }

  /** UIDs marked \Deleted (what EXPUNGE and CLOSE remove). */
  async deletedUids(folder: Folder): Promise<number[]> {
    return await this.store.imap.deletedUids(folder.id);
  }

  /**
   * APPEND (RFC 3501 section 6.3.11): the message is parsed on a parse worker, then stored
   * with its flags and date in one transaction (a special-use folder is made when missing).
   * A header over the limits is refused (too_large: NO [LIMIT]).
   */
  async append(identity: ImapIdentity, folder: Folder, raw: Buffer, flags: MessageFlags, receivedAt: number | undefined): Promise<Appended> {
    checkHeaderLimits(raw, this.headerLimits);
    const parsed = await this.parse(raw);
    const staged = await this.mailboxes.staging.stage(raw, parsed.body);
    return await this.store.transaction(() =>
      this.mailboxes.append(identity.mailbox, folder.name, raw, parsed, { flags, receivedAt, ...(staged && { staged }) }),
    );
  }

  /** UIDs among `uids` (the session's view) that match the key (RFC 3501 section 6.4.4). */
  search(folder: Folder, uids: readonly number[], key: SearchKey, recent: ReadonlySet<number>): Promise<number[]> {
    return searchFolder(this.store, this.bodies, folder, uids, key, recent);
  }
}
