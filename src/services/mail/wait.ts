import { AppError } from '../../core/errors.js';
import type { Principal } from '../../core/types.js';
import type { Store } from '../../store/index.js';
import { requirePermission } from '../access/auth.js';
import { INBOX, type MailboxService } from './mailbox.js';
import { messageView, type MessageView } from './views.js';
import type { MailboxWatchers } from './watchers.js';

export interface WaitQuery {
  /** Wait for a message above this INBOX UID; absent: above the newest one now. */
  afterUid?: string;
  /** At most 60. */
  timeoutSeconds: number;
  uidValidity?: string;
}

export interface WaitResult {
  folder: string;
  uidValidity: string;
  /** The newest INBOX UID the answer covers: the afterUid of the next wait. */
  lastUid: string;
  timedOut: boolean;
  /** Oldest first, at most MAX_MESSAGES. */
  emails: MessageView[];
}

const MAX_MESSAGES = 50;

/**
 * Waits for new mail in INBOX without reading it again and again: the mailbox's watcher (fed by
 * the store's after-commit hook, and for another process's commits by src/app/foreign-commits.ts)
 * wakes the wait when a message is committed there, and the answer is read from the store. The watcher is registered before the first look, so a message
 * committed between the look and the wait is not missed.
 */
export class MailWaitService {
  constructor(
    private readonly store: Store,
    private readonly mailbox: MailboxService,
    private readonly watchers: MailboxWatchers,
  ) {}

  async wait(principal: Principal, query: WaitQuery, signal?: AbortSignal): Promise<WaitResult> {
    requirePermission(principal, 'mail:read');
    const mailbox = await this.mailbox.mailboxOfAccount(principal.accountId);
    const folder = await this.mailbox.folder(mailbox.id, INBOX);
    if (query.uidValidity !== undefined && query.uidValidity !== String(folder.uidValidity)) {
      throw new AppError('conflict', `uidValidity of INBOX is now ${folder.uidValidity}; list it again`);
    }
    const after = query.afterUid === undefined ? folder.uidNext - 1 : Number(query.afterUid);
    const wakeUps = new WakeUps();
    const unwatch = this.watchers.watch(mailbox.id, (change) => {
      // Any new INBOX message has a UID above every earlier one: the read below finds it.
      if (change.kind === 'stored' && change.folder === INBOX) wakeUps.wake();
    });
    let timedOut = false;
    const timer = setTimeout(() => ((timedOut = true), wakeUps.wake()), Math.min(query.timeoutSeconds, 60) * 1000);
    const aborted = (): void => wakeUps.wake();
    signal?.addEventListener('abort', aborted, { once: true });
    try {
      let found = await this.store.messages.afterUid(folder.id, after, MAX_MESSAGES);
      // A wake-up may find nothing new (one for a change another process made says only that
      // the folder may have changed: foreign-changes.ts): the wait goes on until the timeout.
      while (found.length === 0 && !timedOut && !signal?.aborted) {
        await wakeUps.next();
        found = await this.store.messages.afterUid(folder.id, after, MAX_MESSAGES);
      }
      const last = found[found.length - 1];
      return {
        folder: INBOX,
        uidValidity: String(folder.uidValidity),
        lastUid: String(last ? last.uid : after),
        timedOut: found.length === 0,
        emails: found.map(messageView),
      };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', aborted);
      unwatch();
    }
  }
}

/** Wake-ups that may come before they are awaited: `next` resolves at once after a wake-up not yet taken. */
class WakeUps {
  private pending = false;
  private waiting: (() => void) | null = null;

  wake(): void {
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = null;
      resolve();
    } else this.pending = true;
  }

  next(): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }
}
