import { MESSAGE_REMOVED, MESSAGE_STORED, type MessageRemovedEvent, type MessageStoredEvent } from '../../core/events.js';
import type { Committed } from '../../store/index.js';

/** What changed in one folder of a mailbox, as a watcher hears of it after the commit. */
export interface MailboxChange {
  kind: 'stored' | 'removed';
  folder: string;
  uid: string;
}

export type MailboxListener = (change: MailboxChange) => void;

/**
 * Who is watching which mailbox right now (IMAP IDLE clients, event streams), and the
 * after-commit consumer that tells them. A watcher hears only of its own mailbox, so a
 * thousand idle clients cost nothing per stored message but a map lookup.
 */
export class MailboxWatchers {
  private readonly byMailbox = new Map<string, Set<MailboxListener>>();

  /** The topics `onCommitted` reads; main.ts subscribes it to the store's commit feed. */
  static readonly topics = [MESSAGE_STORED, MESSAGE_REMOVED] as const;

  watch(mailboxId: string, listener: MailboxListener): () => void {
    let set = this.byMailbox.get(mailboxId);
    if (!set) this.byMailbox.set(mailboxId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.byMailbox.get(mailboxId) === set) this.byMailbox.delete(mailboxId);
    };
  }

  onCommitted(entries: readonly Committed[]): void {
    for (const entry of entries) {
      if (entry.topic !== MESSAGE_STORED && entry.topic !== MESSAGE_REMOVED) continue;
      const event = entry.payload as MessageStoredEvent | MessageRemovedEvent;
      const listeners = this.byMailbox.get(event.mailboxId);
      if (!listeners) continue;
      const change: MailboxChange = { kind: entry.topic === MESSAGE_STORED ? 'stored' : 'removed', folder: event.folder, uid: event.uid };
      for (const listener of listeners) {
        try {
          listener(change);
        } catch {
          // One watcher's failure is its own.
        }
      }
    }
  }
}
