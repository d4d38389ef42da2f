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
  async get(mailbox: MailboxRecord, name: string): Promise<Folder> {
    const folder = await this.store.folders.byName(mailbox.id, canonicalFolderName(name));
    if (!folder) throw new AppError('not_found', `folder ${name} does not exist`);
    return folder;
  }

  /** The folder; a special-use one (RFC 6154) is made when first needed. */
  async open(mailbox: MailboxRecord, name: string): Promise<Folder> {
    const canonical = canonicalFolderName(name);
    return SPECIAL_USE.has(canonical) ? await this.ensure(mailbox, canonical) : await this.get(mailbox, canonical);
  }

  /**
   * The folder, made (empty, with its parents) when it does not exist yet. Looked up again in
   * the write transaction: another process may have made it since the first look (two IMAP
   * logins on two processes each making the special-use folders).
   */
  async ensure(mailbox: MailboxRecord, name: string): Promise<Folder> {
    const canonical = canonicalFolderName(name);
    return (
      (await this.store.folders.byName(mailbox.id, canonical)) ??
      (await this.store.transaction(
        async () => (await this.store.folders.byName(mailbox.id, canonical)) ?? (await this.make(mailbox, checkedFolderName(name))),
      ))
    );
  }

  /** Every special-use folder, made if missing (a client's LIST sees them all). */
  async ensureSpecial(mailbox: MailboxRecord): Promise<void> {
    const existing = new Set((await this.store.folders.listOfMailbox(mailbox.id)).map((folder) => folder.name));
    const missing = [...SPECIAL_USE.keys()].filter((name) => !existing.has(name));
    if (missing.length === 0) return;
    await this.store.transaction(async () => {
      for (const name of missing) await this.ensure(mailbox, name);
    });
  }

  async list(mailbox: MailboxRecord): Promise<Folder[]> {
    return await this.store.folders.listOfMailbox(mailbox.id);
  }

  async counts(mailbox: MailboxRecord): Promise<FolderCounts[]> {
    return await this.store.folders.countsOfMailbox(mailbox.id);
  }

  /** CREATE (RFC 3501 section 6.3.3): the name and any missing parents. */
  async create(mailbox: MailboxRecord, name: string): Promise<Folder> {
    const canonical = checkedFolderName(name);
    return await this.store.transaction(async () => {
      if (await this.store.folders.byName(mailbox.id, canonical)) throw new AppError('conflict', `folder ${canonical} already exists`, { conflict: 'exists' });
      return await this.make(mailbox, canonical);
    });
  }

  /**
   * DELETE (RFC 3501 section 6.3.4): the folder and its messages. INBOX cannot be deleted,
   * nor a folder with folders below it (delete those first).
   */
  async delete(mailbox: MailboxRecord, name: string): Promise<void> {
    await this.store.transaction(async () => {
      const folder = await this.get(mailbox, name);
      if (folder.name === INBOX) throw new AppError('forbidden', 'INBOX cannot be deleted');
      if ((await this.list(mailbox)).some((other) => isBelow(other.name, folder.name))) {
        throw new AppError('conflict', `folder ${folder.name} has folders below it; delete those first`, { conflict: 'children' });
      }
      await this.ops.expunge(mailbox, folder, await this.store.imap.uidsAfter(folder.id, 0));
      await this.store.folders.retire(mailbox.id, folder.name, folder.uidValidity);
      await this.store.folders.delete(folder.id);
      this.store.notice(FOLDER_CHANGED, { mailboxId: mailbox.id, folder: folder.name } satisfies FolderNotice);
    });
  }

  /**
   * RENAME (RFC 3501 section 6.3.5): the folder and every folder below it. Renaming INBOX
   * moves its messages to a new folder of the new name and leaves INBOX empty.
   */
  async rename(mailbox: MailboxRecord, from: string, to: string): Promise<void> {
    const target = checkedFolderName(to);
    await this.store.transaction(async () => {
      const folder = await this.get(mailbox, from);
      if (await this.store.folders.byName(mailbox.id, target)) throw new AppError('conflict', `folder ${target} already exists`, { conflict: 'exists' });
      if (isBelow(target, folder.name) || target === folder.name) throw new AppError('invalid_input', 'a folder cannot be renamed to a name below itself');
      if (folder.name === INBOX) {
        await this.ops.move(mailbox, folder, await this.store.imap.uidsAfter(folder.id, 0), await this.make(mailbox, target));
        return;
      }
      const moving = (await this.list(mailbox)).filter((other) => other.name === folder.name || isBelow(other.name, folder.name));
      for (const other of moving) await this.renameOne(mailbox, other, target + other.name.slice(folder.name.length));
      for (const parent of parentsOf(target)) if (!(await this.store.folders.byName(mailbox.id, parent))) await this.make(mailbox, parent);
    });
  }

  async subscriptions(mailbox: MailboxRecord): Promise<string[]> {
    return await this.store.folders.subscriptions(mailbox.id);
  }

  /** SUBSCRIBE (RFC 3501 section 6.3.6): only existing folders can be subscribed. */
  async subscribe(mailbox: MailboxRecord, name: string): Promise<void> {
    const folder = await this.get(mailbox, name);
    await this.store.transaction(() => this.store.folders.subscribe(mailbox.id, folder.name));
  }

  /** UNSUBSCRIBE (RFC 3501 section 6.3.7): also of a name whose folder is gone. */
  async unsubscribe(mailbox: MailboxRecord, name: string): Promise<void> {
    const removed = await this.store.transaction(() => this.store.folders.unsubscribe(mailbox.id, canonicalFolderName(name)));
    if (!removed) throw new AppError('not_found', `${name} is not subscribed`);
  }

  /** Inside a transaction: a new empty folder with its missing parents; special-use ones subscribed. */
  private async make(mailbox: MailboxRecord, name: string): Promise<Folder> {
    for (const parent of parentsOf(name)) if (!(await this.store.folders.byName(mailbox.id, parent))) await this.make(mailbox, parent);
    if ((await this.store.folders.listOfMailbox(mailbox.id)).length >= this.maxFolders) {
      throw new AppError('too_large', `a mailbox holds at most ${this.maxFolders} folders`);
    }
    const folder = await this.store.folders.create(mailbox.id, name, await this.uidValidityFor(mailbox, name), this.clock.now().getTime());
    if (SPECIAL_USE.has(name) || name === INBOX) await this.store.folders.subscribe(mailbox.id, name);
    return folder;
  }

  private async renameOne(mailbox: MailboxRecord, folder: Folder, name: string): Promise<void> {
    await this.store.folders.retire(mailbox.id, folder.name, folder.uidValidity);
    await this.store.folders.rename(folder.id, name);
    const retired = await this.store.folders.retiredUidValidity(mailbox.id, name);
    if (retired !== null && retired >= folder.uidValidity) await this.store.folders.setUidValidity(folder.id, await this.uidValidityFor(mailbox, name));
    if (await this.store.folders.unsubscribe(mailbox.id, folder.name)) await this.store.folders.subscribe(mailbox.id, name);
    this.store.notice(FOLDER_CHANGED, { mailboxId: mailbox.id, folder: folder.name } satisfies FolderNotice);
  }

  /** A fresh UIDVALIDITY, above the one the name last had if it had one. */
  private async uidValidityFor(mailbox: MailboxRecord, name: string): Promise<number> {
    const retired = await this.store.folders.retiredUidValidity(mailbox.id, name);
    if (retired === null) return newUidValidity();
    if (retired >= MAX_UID_VALIDITY) throw new AppError('conflict', `the name ${name} has used up its UIDVALIDITY values`);
    return retired + 1;
  }
}
