import { AppError } from '../../core/errors.js';
import { keyKindOf } from '../../core/keys.js';
import type { Folder, Principal } from '../../core/types.js';
import type { MailboxRecord } from '../../store/accounts.js';
import type { MessageMeta } from '../../store/imap.js';
import type { Store } from '../../store/index.js';
import type { AuthService } from '../accounts/auth.js';
import { canonicalFolderName, type MailboxService } from '../mail/mailbox.js';
import { headerEnd } from '../../mime/mime-tree.js';
import { matchesSearch, type SearchContext, type SearchKey } from './search.js';
import type { SearchIndexService } from '../mail/search-index.js';
import type { MailboxListener, MailboxWatchers } from '../mail/watchers.js';

export type { MessageMeta } from '../../store/imap.js';
export type { SearchKey } from './search.js';

/** Who an IMAP connection logged in as. */
export interface ImapIdentity {
  principal: Principal;
  mailbox: MailboxRecord;
}

export interface FolderSnapshot {
  folder: Folder;
  /** Every UID in ascending order: index + 1 is the message sequence number. */
  uids: number[];
  unseen: number;
  firstUnseenUid: number | null;
}

export interface FolderStatus {
  name: string;
  messages: number;
  uidNext: number;
  uidValidity: number;
  unseen: number;
}

export interface FlagSet {
  seen?: boolean;
  flagged?: boolean;
}

export type FlagMode = 'add' | 'remove' | 'replace';

const HEADER_PEEK_BYTES = 64 * 1024;
const LOGIN_FAILED = 'invalid mailbox address or key';

/**
 * What the IMAP adapter needs of the store (DESIGN.md: IMAP reads and writes the same
 * store through services). Flags are the same seen/flagged columns REST shows as isRead
 * and isStarred, so a change on either side is visible on the other.
 */
export class ImapSessionService {
  constructor(
    private readonly store: Store,
    private readonly auth: AuthService,
    private readonly mailboxes: MailboxService,
    private readonly searchIndex: SearchIndexService,
    private readonly watchers: MailboxWatchers,
  ) {}

  /** Calls `listener` after each commit that changes the session's mailbox (IDLE); returns the unsubscribe. */
  watch(identity: ImapIdentity, listener: MailboxListener): () => void {
    return this.watchers.watch(identity.mailbox.id, listener);
  }

  /**
   * LOGIN: the username is the mailbox address, the password the full account key.
   * Limited access keys cannot use IMAP (contract, Authentication part 6).
   */
  login(username: string, secret: string): ImapIdentity {
    if (keyKindOf(secret) === 'access') throw new AppError('forbidden', 'limited access keys cannot use IMAP; log in with the full account key');
    let principal: Principal;
    try {
      principal = this.auth.authenticate(secret);
    } catch {
      throw new AppError('unauthorized', LOGIN_FAILED);
    }
    if (principal.kind !== 'full') throw new AppError('forbidden', 'limited access keys cannot use IMAP; log in with the full account key');
    const mailbox = this.mailboxes.mailboxForAddress(username);
    // The mailbox's own address only: an alias delivers to it but is not a login name.
    if (!mailbox || mailbox.accountId !== principal.accountId || mailbox.address !== username.trim().toLowerCase()) throw new AppError('unauthorized', LOGIN_FAILED);
    return { principal, mailbox };
  }

  /** Re-checks the key before each command, so a revoked key ends its sessions too. */
  stillValid(identity: ImapIdentity, secret: string): boolean {
    try {
      return this.login(identity.mailbox.address, secret).principal.keyId === identity.principal.keyId;
    } catch {
      return false;
    }
  }

  folders(identity: ImapIdentity): Folder[] {
    return this.store.folders.listOfMailbox(identity.mailbox.id);
  }

  open(identity: ImapIdentity, name: string): FolderSnapshot {
    const folder = this.mailboxes.folder(identity.mailbox.id, canonicalFolderName(name));
    return {
      folder, uids: this.store.imap.uidsAfter(folder.id, 0), unseen: this.store.imap.unseenCount(folder.id),
      firstUnseenUid: this.store.imap.firstUnseenUid(folder.id),
    };
  }

  status(identity: ImapIdentity, name: string): FolderStatus {
    const folder = this.mailboxes.folder(identity.mailbox.id, canonicalFolderName(name));
    return {
      name: folder.name, messages: folder.messageCount, uidNext: folder.uidNext, uidValidity: folder.uidValidity,
      unseen: this.store.imap.unseenCount(folder.id),
    };
  }

  /** UIDs stored after `afterUid`: new mail since the session last looked. */
  newUids(folder: Folder, afterUid: number): number[] {
    return this.store.imap.uidsAfter(folder.id, afterUid);
  }

  /** Metadata of the given UIDs (ascending); UIDs that do not exist are left out. */
  meta(folder: Folder, uids: readonly number[]): MessageMeta[] {
    if (uids.length === 0) return [];
    const wanted = new Set(uids);
    // A loop, not Math.min(...uids): a folder can hold more UIDs than a call has arguments.
    let low = uids[0];
    let high = uids[0];
    for (const uid of uids) {
      if (uid < low) low = uid;
      if (uid > high) high = uid;
    }
    return this.store.imap.metaBetween(folder.id, low, high).filter((row) => wanted.has(row.uid));
  }

  /** The stored RFC 822 bytes, exactly as received (no size limit here, unlike REST read). */
  raw(folder: Folder, uid: number): Buffer {
    const raw = this.store.imap.raw(folder.id, uid);
    if (!raw) throw new AppError('not_found', `no message ${uid} in ${folder.name}`);
    return raw;
  }

  /**
   * The message's header bytes (through the blank line), reading only the start of the
   * stored bytes unless the header is longer than that.
   */
  header(folder: Folder, uid: number): Buffer {
    const head = this.store.imap.rawHead(folder.id, uid, HEADER_PEEK_BYTES);
    if (!head) throw new AppError('not_found', `no message ${uid} in ${folder.name}`);
    const end = headerLength(head);
    if (end !== null) return head.subarray(0, end);
    return head.length < HEADER_PEEK_BYTES ? head : this.raw(folder, uid);
  }

  /** Applies a flag change to each message and returns the ones whose flags changed. */
  setFlags(folder: Folder, uids: readonly number[], mode: FlagMode, flags: FlagSet): MessageMeta[] {
    const rows = this.meta(folder, uids);
    const changed: MessageMeta[] = [];
    this.store.transaction(() => {
      for (const row of rows) {
        const seen = nextFlag(row.seen, flags.seen, mode);
        const flagged = nextFlag(row.flagged, flags.flagged, mode);
        if (seen === row.seen && flagged === row.flagged) continue;
        this.store.imap.setFlags(row.rowId, seen, flagged);
        changed.push({ ...row, seen, flagged });
      }
    });
    return changed;
  }

  /** UIDs among `uids` (the session's view) that match every key (RFC 3501 section 6.4.4). */
  async search(folder: Folder, uids: readonly number[], key: SearchKey): Promise<number[]> {
    await this.searchIndex.catchUp();
    // Flags read after the wait, so the answer is as of when it is sent.
    const rows = this.meta(folder, uids);
    const context: SearchContext = {
      fullText: memoize((match) => new Set(this.store.imap.fullTextUids(folder.id, match))),
      raw: (uid) => this.store.imap.raw(folder.id, uid) ?? Buffer.alloc(0),
    };
    return rows.filter((row) => matchesSearch(row, key, context)).map((row) => row.uid);
  }
}

const nextFlag = (current: boolean, requested: boolean | undefined, mode: FlagMode): boolean => {
  if (mode === 'replace') return requested === true;
  if (requested !== true) return current;
  return mode === 'add';
};

/** One index query per distinct search term, however many messages it is tested against. */
const memoize = <T>(compute: (key: string) => T): ((key: string) => T) => {
  const cache = new Map<string, T>();
  return (key) => {
    if (!cache.has(key)) cache.set(key, compute(key));
    return cache.get(key) as T;
  };
};

const headerLength = (head: Buffer): number | null => {
  const end = headerEnd(head, 0, head.length);
  return end < head.length || /\r?\n\r?\n$/.test(head.subarray(-4).toString('latin1')) ? end : null;
};
