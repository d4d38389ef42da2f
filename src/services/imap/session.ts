import { AppError } from '../../core/errors.js';
import { keyKindOf } from '../../core/keys.js';
import type { Folder, Principal } from '../../core/types.js';
import type { MailboxRecord } from '../../store/accounts.js';
import type { FlagRow } from '../../store/imap-rows.js';
import type { Store } from '../../store/index.js';
import type { AuthService } from '../access/auth.js';
import type { MailboxService } from '../mail/mailbox.js';
import type { FolderService } from '../mail/folders.js';
import type { MailboxListener, MailboxWatchers } from '../mail/watchers.js';

export type { FlagRow, FetchRow, MessageMeta } from '../../store/imap-rows.js';
export type { SearchKey } from './search-key.js';

/** Who an IMAP connection logged in as. The key itself is not kept: the principal is checked again by its id. */
export interface ImapIdentity {
  principal: Principal;
  mailbox: MailboxRecord;
}

/** A folder as a SELECT opens it. */
export interface FolderSnapshot {
  folder: Folder;
  /** Every UID in ascending order: index + 1 is the message sequence number. */
  uids: number[];
  /** UIDs that are \Recent in this session (RFC 3501 section 2.3.2). */
  recent: number[];
  firstUnseenUid: number | null;
  keywords: string[];
}

export interface FolderStatus {
  name: string;
  messages: number;
  recent: number;
  uidNext: number;
  uidValidity: number;
  unseen: number;
  highestModseq: number;
}

/** What a session's view of its folder must learn (RFC 3501 section 7: EXISTS, EXPUNGE, FETCH FLAGS). */
export interface FolderChanges {
  /** The folder now (its name changes with a RENAME); null when it was deleted or its UIDVALIDITY changed. */
  folder: Folder | null;
  /** UIDs stored since the view's last UID. */
  fresh: number[];
  /** Of those, the ones \Recent to this session. */
  recent: number[];
  /** UIDs expunged since `expungedAfter`. */
  gone: number[];
  /** Messages of the view whose flags changed since `flagsAfter`. */
  flags: FlagRow[];
}

const LOGIN_FAILED = 'invalid mailbox address or key';
const LIMITED = 'limited access keys cannot use IMAP; log in with the full account key';

/**
 * What an IMAP session needs of the service (docs/design.md "The process": IMAP reads and writes
 * the same store through services): logging in, folders, opening one, and what changed in it
 * since. Flags are the same columns REST shows (isRead, isStarred, ...), so a change on either
 * side is visible on the other.
 */
export class ImapSessionService {
  constructor(
    private readonly store: Store,
    private readonly auth: AuthService,
    private readonly mailboxes: MailboxService,
    private readonly folderService: FolderService,
    private readonly watchers: MailboxWatchers,
  ) {}

  /** Calls `listener` after each commit that changes the session's mailbox (IDLE); returns the unsubscribe. */
  watch(identity: ImapIdentity, listener: MailboxListener): () => void {
    return this.watchers.watch(identity.mailbox.id, listener);
  }

  /**
   * LOGIN: the username is the mailbox address, the password the full account key.
   * Limited access keys cannot use IMAP (docs/agents/keys.md).
   */
  async login(username: string, secret: string): Promise<ImapIdentity> {
    if (keyKindOf(secret) === 'access') throw new AppError('forbidden', LIMITED);
    let principal: Principal;
    try {
      principal = await this.auth.authenticate(secret);
    } catch {
      throw new AppError('unauthorized', LOGIN_FAILED);
    }
    if (principal.kind !== 'full') throw new AppError('forbidden', LIMITED);
    const mailbox = await this.mailboxes.mailboxForAddress(username);
    // The mailbox's own address only: an alias delivers to it but is not a login name.
    if (!mailbox || mailbox.accountId !== principal.accountId || mailbox.address !== username.trim().toLowerCase())
      throw new AppError('unauthorized', LOGIN_FAILED);
    return { principal, mailbox };
  }

  /**
   * Before each command, as SMTP submission does: the key the session logged in with must
   * still work (not revoked, rotated away or expired). Checked by the key's id; the secret
   * is not kept in the session.
   */
  async stillValid(identity: ImapIdentity): Promise<boolean> {
    return await this.auth.stillValid(identity.principal);
  }

  /** Every folder; the special-use ones (RFC 6154) are made first if missing. */
  async folders(identity: ImapIdentity): Promise<Folder[]> {
    await this.folderService.ensureSpecial(identity.mailbox);
    return await this.folderService.list(identity.mailbox);
  }

  /** A folder to act on (a special-use one is made when missing); not_found otherwise. */
  async folder(identity: ImapIdentity, name: string): Promise<Folder> {
    return await this.folderService.open(identity.mailbox, name);
  }

  /**
   * SELECT or EXAMINE. A read-write selection takes the messages above the folder's recent
   * mark as its \Recent ones (RFC 3501 section 2.3.2); a read-only one shows them without
   * taking them.
   */
  async open(identity: ImapIdentity, name: string, readOnly: boolean): Promise<FolderSnapshot> {
    const folder = await this.folder(identity, name);
    const uids = await this.store.imap.uidsAfter(folder.id, 0);
    const last = uids.length > 0 ? uids[uids.length - 1] : 0;
    const mark = readOnly ? await this.store.folders.recentMark(folder.id) : await this.store.transaction(() => this.store.folders.takeRecent(folder.id, last));
    return {
      folder,
      uids,
      recent: uids.filter((uid) => uid > mark),
      firstUnseenUid: await this.store.imap.firstUnseenUid(folder.id),
      keywords: await this.store.folders.keywords(folder.id),
    };
  }

  /**
   * The folder's STATUS items (RFC 3501 section 6.3.10). The folder row holds all but RECENT and
   * UNSEEN, which are counted, and only when `items` asks for them: a client that polls MESSAGES
   * pays one row read. An item not asked for is 0.
   */
  async status(identity: ImapIdentity, name: string, items: readonly string[] = ['RECENT', 'UNSEEN']): Promise<FolderStatus> {
    const folder = await this.folder(identity, name);
    return {
      name: folder.name,
      messages: folder.messageCount,
      recent: items.includes('RECENT') ? await this.recentCount(folder) : 0,
      uidNext: folder.uidNext,
      uidValidity: folder.uidValidity,
      unseen: items.includes('UNSEEN') ? await this.store.imap.unseenCount(folder.id) : 0,
      highestModseq: folder.highestModseq,
    };
  }

  private async recentCount(folder: Folder): Promise<number> {
    const mark = await this.store.folders.recentMark(folder.id);
    return (await this.store.imap.uidsAfter(folder.id, mark)).length;
  }

  /** Keywords used in the folder (the FLAGS response). */
  async keywords(folder: Folder): Promise<string[]> {
    return await this.store.folders.keywords(folder.id);
  }

  /**
   * What changed in the folder since a view last looked (RFC 7162 mod-sequences): one read of
   * the folder row when nothing did. `lastUid` is the view's highest UID; `takeRecent`
   * makes new mail \Recent to this session if no other took it first.
   */
  async changes(folder: Folder, since: { lastUid: number; flagsAfter: number; expungedAfter: number; takeRecent: boolean }): Promise<FolderChanges> {
    const now = await this.store.folders.byId(folder.id);
    const none: FolderChanges = { folder: now, fresh: [], recent: [], gone: [], flags: [] };
    if (!now || now.uidValidity !== folder.uidValidity) return { ...none, folder: null };
    if (now.highestModseq <= Math.min(since.flagsAfter, since.expungedAfter)) return none;
    const fresh = await this.store.imap.uidsAfter(folder.id, since.lastUid);
    const last = fresh.length > 0 ? fresh[fresh.length - 1] : since.lastUid;
    const mark =
      fresh.length === 0
        ? last
        : since.takeRecent
          ? await this.store.transaction(() => this.store.folders.takeRecent(folder.id, last))
          : await this.store.folders.recentMark(folder.id);
    return {
      folder: now,
      fresh,
      recent: fresh.filter((uid) => uid > mark),
      gone: now.highestModseq > since.expungedAfter ? await this.store.imap.expungedSince(folder.id, since.expungedAfter) : [],
      flags: now.highestModseq > since.flagsAfter ? await this.store.imap.flagsChangedSince(folder.id, since.flagsAfter, since.lastUid) : [],
    };
  }

  /** UIDs expunged since `modseq` (QRESYNC, RFC 7162 section 3.2.5.2). */
  async expungedSince(folder: Folder, modseq: number): Promise<number[]> {
    return await this.store.imap.expungedSince(folder.id, modseq);
  }

  /** Flags of messages changed since `modseq`, up to `maxUid`. */
  async flagsChangedSince(folder: Folder, modseq: number, maxUid: number): Promise<FlagRow[]> {
    return await this.store.imap.flagsChangedSince(folder.id, modseq, maxUid);
  }

  async createFolder(identity: ImapIdentity, name: string): Promise<void> {
    await this.folderService.create(identity.mailbox, name);
  }

  async deleteFolder(identity: ImapIdentity, name: string): Promise<void> {
    await this.folderService.delete(identity.mailbox, name);
  }

  async renameFolder(identity: ImapIdentity, from: string, to: string): Promise<void> {
    await this.folderService.rename(identity.mailbox, from, to);
  }

  async subscriptions(identity: ImapIdentity): Promise<string[]> {
    return await this.folderService.subscriptions(identity.mailbox);
  }

  async subscribe(identity: ImapIdentity, name: string, on: boolean): Promise<void> {
    if (on) await this.folderService.subscribe(identity.mailbox, name);
    else await this.folderService.unsubscribe(identity.mailbox, name);
  }
}
