import { FOLDER_CHANGED, MESSAGE_FLAGS, MESSAGE_REMOVED, MESSAGE_STORED, type FolderNotice, type MessageStoredEvent } from '../../core/events.js';
import type { Committed } from '../../store/index.js';

/**
 * What changed in one folder of a mailbox, as a watcher hears of it after the commit: mail
 * stored, removed, flags changed, or the folder itself deleted or renamed. A watcher reads
 * the details from the store (an IMAP session asks what changed since its mod-sequence).
 */
export interface MailboxChange {
  kind: 'stored' | 'removed' | 'flags' | 'folder';
  folder: string;
}

export type MailboxListener = (change: MailboxChange) => void;

const KIND_OF: Record<string, MailboxChange['kind']> = {
  [MESSAGE_STORED]: 'stored',
  [MESSAGE_REMOVED]: 'removed',
  [MESSAGE_FLAGS]: 'flags',
  [FOLDER_CHANGED]: 'folder',
};

/**
 * Who is watching which mailbox right now (IMAP IDLE clients, event streams), and the
 * after-commit consumer that tells them. A watcher hears only of its own mailbox, so a
 * thousand idle clients cost nothing per stored message but a map lookup.
 */
export class MailboxWatchers {
  private readonly byMailbox = new Map<string, Set<MailboxListener>>();
  /** Grows whenever a mailbox is first watched or no longer watched (foreign-changes.ts looks again only then). */
  private membership = 0;

  /** The topics `onCommitted` reads; src/app/reactions.ts subscribes it to the store's commit feed. */
  static readonly topics = [MESSAGE_STORED, MESSAGE_REMOVED, MESSAGE_FLAGS, FOLDER_CHANGED] as const;

  watch(mailboxId: string, listener: MailboxListener): () => void {
    let set = this.byMailbox.get(mailboxId);
    if (!set) {
      this.byMailbox.set(mailboxId, (set = new Set()));
      this.membership += 1;
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.byMailbox.get(mailboxId) === set) {
        this.byMailbox.delete(mailboxId);
        this.membership += 1;
      }
    };
  }

  onCommitted(entries: readonly Committed[]): void {
    for (const entry of entries) {
      const kind = KIND_OF[entry.topic];
      if (!kind) continue;
      const event = entry.payload as MessageStoredEvent | FolderNotice;
      this.tell(event.mailboxId, { kind, folder: event.folder });
    }
  }

  /** A number that changes whenever the set of watched mailboxes does. */
  get membershipVersion(): number {
    return this.membership;
  }

  /** The mailboxes someone watches now. */
  watchedMailboxes(): string[] {
    return [...this.byMailbox.keys()];
  }

  /** Tells the mailbox's watchers of a change (a commit here, or one another process made: foreign-changes.ts). */
  tell(mailboxId: string, change: MailboxChange): void {
    for (const listener of this.byMailbox.get(mailboxId) ?? []) {
      try {
        listener(change);
      } catch {
        // One watcher's failure is its own.
      }
    }
  }
}
