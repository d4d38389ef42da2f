import { AppError } from '../../core/errors.js';
import type { Clock } from '../../core/clock.js';
import { FOLDER_CHANGED, type FolderNotice } from '../../core/events.js';
import { newUidValidity } from '../../core/ids.js';
import type { Folder } from '../../core/types.js';
import type { MailboxRecord } from '../../store/accounts.js';
import type { FolderCounts } from '../../store/folders.js';
import type { Store } from '../../store/index.js';
import { canonicalFolderName, checkedFolderName, INBOX, isBelow, parentsOf, SPECIAL_USE } from './folder-names.js';
import type { MessageOps } from './message-ops.js';

/** UIDVALIDITY is a 32-bit number above 0 (RFC 3501 section 9, nz-number). */
const MAX_UID_VALIDITY = 0xffffffff;

/**
 * The folders of a mailbox, for IMAP (CREATE, DELETE, RENAME, SUBSCRIBE, LIST) and REST.
 * A folder's UIDVALIDITY is fixed while it exists; a name that is made again after its
 * folder was deleted or renamed away gets a greater one (RFC 3501 section 2.3.1.1), so a
 * client's cached UIDs of the old folder are never taken for the new one's.
 */
export class FolderService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly ops: MessageOps,
    private readonly maxFolders: number,
  ) {}

  /** The folder, or not_found. */
  get(mailbox: MailboxRecord, name: string): Folder {
    const folder = this.store.folders.byName(mailbox.id, canonicalFolderName(name));
    if (!folder) throw new AppError('not_found', `folder ${name} does not exist`);
    return folder;
  }

  /** The folder; a special-use one (RFC 6154) is made when first needed. */
  open(mailbox: MailboxRecord, name: string): Folder {
    const canonical = canonicalFolderName(name);
    return SPECIAL_USE.has(canonical) ? this.ensure(mailbox, canonical) : this.get(mailbox, canonical);
  }

  /**
   * The folder, made (empty, with its parents) when it does not exist yet. Looked up again in
   * the write transaction: another process may have made it since the first look (two IMAP
   * logins on two processes each making the special-use folders).
   */
  ensure(mailbox: MailboxRecord, name: string): Folder {
    const canonical = canonicalFolderName(name);
    return (
      this.store.folders.byName(mailbox.id, canonical) ??
      this.store.transaction(() => this.store.folders.byName(mailbox.id, canonical) ?? this.make(mailbox, checkedFolderName(name)))
    );
  }

  /** Every special-use folder, made if missing (a client's LIST sees them all). */
  ensureSpecial(mailbox: MailboxRecord): void {
    const existing = new Set(this.store.folders.listOfMailbox(mailbox.id).map((folder) => folder.name));
    const missing = [...SPECIAL_USE.keys()].filter((name) => !existing.has(name));
    if (missing.length > 0) this.store.transaction(() => missing.forEach((name) => this.ensure(mailbox, name)));
  }

  list(mailbox: MailboxRecord): Folder[] {
    return this.store.folders.listOfMailbox(mailbox.id);
  }

  counts(mailbox: MailboxRecord): FolderCounts[] {
    return this.store.folders.countsOfMailbox(mailbox.id);
  }

  /** CREATE (RFC 3501 section 6.3.3): the name and any missing parents. */
  create(mailbox: MailboxRecord, name: string): Folder {
    const canonical = checkedFolderName(name);
    return this.store.transaction(() => {
      if (this.store.folders.byName(mailbox.id, canonical)) throw new AppError('conflict', `folder ${canonical} already exists`, { conflict: 'exists' });
      return this.make(mailbox, canonical);
    });
  }

  /**
   * DELETE (RFC 3501 section 6.3.4): the folder and its messages. INBOX cannot be deleted,
   * nor a folder with folders below it (delete those first).
   */
  delete(mailbox: MailboxRecord, name: string): void {
    this.store.transaction(() => {
      const folder = this.get(mailbox, name);
      if (folder.name === INBOX) throw new AppError('forbidden', 'INBOX cannot be deleted');
      if (this.list(mailbox).some((other) => isBelow(other.name, folder.name))) {
        throw new AppError('conflict', `folder ${folder.name} has folders below it; delete those first`, { conflict: 'children' });
      }
      this.ops.expunge(mailbox, folder, this.store.imap.uidsAfter(folder.id, 0));
      this.store.folders.retire(mailbox.id, folder.name, folder.uidValidity);
      this.store.folders.delete(folder.id);
      this.store.notice(FOLDER_CHANGED, { mailboxId: mailbox.id, folder: folder.name } satisfies FolderNotice);
    });
  }

  /**
   * RENAME (RFC 3501 section 6.3.5): the folder and every folder below it. Renaming INBOX
   * moves its messages to a new folder of the new name and leaves INBOX empty.
   */
  rename(mailbox: MailboxRecord, from: string, to: string): void {
    const target = checkedFolderName(to);
    this.store.transaction(() => {
      const folder = this.get(mailbox, from);
      if (this.store.folders.byName(mailbox.id, target)) throw new AppError('conflict', `folder ${target} already exists`, { conflict: 'exists' });
      if (isBelow(target, folder.name) || target === folder.name) throw new AppError('invalid_input', 'a folder cannot be renamed to a name below itself');
      if (folder.name === INBOX) {
        this.ops.move(mailbox, folder, this.store.imap.uidsAfter(folder.id, 0), this.make(mailbox, target));
        return;
      }
      const moving = this.list(mailbox).filter((other) => other.name === folder.name || isBelow(other.name, folder.name));
      for (const other of moving) this.renameOne(mailbox, other, target + other.name.slice(folder.name.length));
      for (const parent of parentsOf(target)) if (!this.store.folders.byName(mailbox.id, parent)) this.make(mailbox, parent);
    });
  }

  subscriptions(mailbox: MailboxRecord): string[] {
    return this.store.folders.subscriptions(mailbox.id);
  }

  /** SUBSCRIBE (RFC 3501 section 6.3.6): only existing folders can be subscribed. */
  subscribe(mailbox: MailboxRecord, name: string): void {
    const folder = this.get(mailbox, name);
    this.store.transaction(() => this.store.folders.subscribe(mailbox.id, folder.name));
  }

  /** UNSUBSCRIBE (RFC 3501 section 6.3.7): also of a name whose folder is gone. */
  unsubscribe(mailbox: MailboxRecord, name: string): void {
    const removed = this.store.transaction(() => this.store.folders.unsubscribe(mailbox.id, canonicalFolderName(name)));
    if (!removed) throw new AppError('not_found', `${name} is not subscribed`);
  }

  /** Inside a transaction: a new empty folder with its missing parents; special-use ones subscribed. */
  private make(mailbox: MailboxRecord, name: string): Folder {
    for (const parent of parentsOf(name)) if (!this.store.folders.byName(mailbox.id, parent)) this.make(mailbox, parent);
    if (this.store.folders.listOfMailbox(mailbox.id).length >= this.maxFolders) {
      throw new AppError('too_large', `a mailbox holds at most ${this.maxFolders} folders`);
    }
    const folder = this.store.folders.create(mailbox.id, name, this.uidValidityFor(mailbox, name), this.clock.now().getTime());
    if (SPECIAL_USE.has(name) || name === INBOX) this.store.folders.subscribe(mailbox.id, name);
    return folder;
  }

  private renameOne(mailbox: MailboxRecord, folder: Folder, name: string): void {
    this.store.folders.retire(mailbox.id, folder.name, folder.uidValidity);
    this.store.folders.rename(folder.id, name);
    const retired = this.store.folders.retiredUidValidity(mailbox.id, name);
    if (retired !== null && retired >= folder.uidValidity) this.store.folders.setUidValidity(folder.id, this.uidValidityFor(mailbox, name));
    if (this.store.folders.unsubscribe(mailbox.id, folder.name)) this.store.folders.subscribe(mailbox.id, name);
    this.store.notice(FOLDER_CHANGED, { mailboxId: mailbox.id, folder: folder.name } satisfies FolderNotice);
  }

  /** A fresh UIDVALIDITY, above the one the name last had if it had one. */
  private uidValidityFor(mailbox: MailboxRecord, name: string): number {
    const retired = this.store.folders.retiredUidValidity(mailbox.id, name);
    if (retired === null) return newUidValidity();
    if (retired >= MAX_UID_VALIDITY) throw new AppError('conflict', `the name ${name} has used up its UIDVALIDITY values`);
    return retired + 1;
  }
}
