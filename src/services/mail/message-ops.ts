import {
  JUNK_JUDGED,
  MESSAGE_FLAGS,
  MESSAGE_REMOVED,
  MESSAGE_STORED,
  type FolderNotice,
  type MessageRemovedEvent,
  type MessageStoredEvent,
} from '../../core/events.js';
import type { Clock } from '../../core/clock.js';
import type { Folder, MessageFlags } from '../../core/types.js';
import type { MailboxRecord } from '../../store/accounts.js';
import type { FlagRow, MessageMeta } from '../../store/imap-rows.js';
import type { Store } from '../../store/index.js';
import { indexedText, type SearchText } from '../../core/search-index.js';
import { participantsOf } from '../../mime/parse.js';
import { flagsAfterMove, judgmentChanged } from './junk-judgments.js';

export type SystemFlag = 'seen' | 'answered' | 'flagged' | 'deleted' | 'draft';

/** A STORE (RFC 3501 section 6.4.6): flags set, added or removed. */
export interface FlagChange {
  mode: 'add' | 'remove' | 'replace';
  system: ReadonlySet<SystemFlag>;
  keywords: readonly string[];
}

export interface FlagResult {
  /** Messages whose flags changed, with their new flags and mod-sequence. */
  changed: FlagRow[];
  /** Every message of the set that exists, as it is now (changed or not). */
  current: FlagRow[];
  /** UIDs left alone because they changed after UNCHANGEDSINCE (RFC 7162 section 3.1.3). */
  modified: number[];
}

/** UIDs of a copy or a move: each source UID and the UID its copy got (RFC 4315 COPYUID). */
export interface CopyResult {
  uidValidity: number;
  pairs: [number, number][];
}

/**
 * Changes to stored messages that mail clients make (flags, copy, move, expunge), for IMAP
 * and REST alike. Each runs in one transaction that also takes the folder's mod-sequence
 * (RFC 7162) and stages what watchers need to hear after the commit: new copies as outbox
 * facts (webhooks and IDLE: a copied message may produce an event, docs/agents/webhooks.md), flag
 * changes and removals as notices.
 */
export class MessageOps {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  async setFlags(mailbox: MailboxRecord, folder: Folder, uids: readonly number[], change: FlagChange, unchangedSince?: number): Promise<FlagResult> {
    return await this.store.transaction(async () => {
      const result: FlagResult = { changed: [], current: [], modified: [] };
      const rows = await rowsOf(uids, (low, high) => this.store.imap.fetchBetween(folder.id, low, high, false, 0));
      // RFC 7162 section 3.1.3: a message changed since UNCHANGEDSINCE is left as it is.
      const modifiedSince = (row: { modseq: number }) => unchangedSince !== undefined && row.modseq > unchangedSince;
      // The new flags first, then one mod-sequence and one write for all that changed.
      const changes = rows.map((row) => {
        const flags = applyChange(row.flags, change);
        return { row, flags, written: !modifiedSince(row) && !sameFlags(flags, row.flags) };
      });
      const writes = changes.filter(({ written }) => written);
      const modseq = writes.length > 0 ? await this.store.folders.nextModseq(folder.id) : 0;
      if (writes.length > 0)
        await this.store.imap.setFlagsOfMany(
          writes.map(({ row, flags }) => ({ rowId: row.rowId, flags })),
          modseq,
        );
      for (const { row, flags, written } of changes) {
        if (modifiedSince(row)) {
          result.modified.push(row.uid);
          result.current.push(row);
          continue;
        }
        if (!written) {
          result.current.push(row);
          continue;
        }
        if (judgmentChanged(row.flags, flags)) await this.queueTraining(row.rowId);
        const updated = { rowId: row.rowId, uid: row.uid, flags, modseq };
        result.changed.push(updated);
        result.current.push(updated);
      }
      if (change.mode !== 'remove' && change.keywords.length > 0) await this.store.folders.addKeywords(folder.id, change.keywords);
      if (result.changed.length > 0) this.store.notice(MESSAGE_FLAGS, { mailboxId: mailbox.id, folder: folder.name } satisfies FolderNotice);
      return result;
    });
  }

  /** Copies messages, flags and internal dates kept (RFC 3501 section 6.4.7), in UID order. */
  async copy(mailbox: MailboxRecord, source: Folder, uids: readonly number[], target: Folder): Promise<CopyResult> {
    return await this.store.transaction(async () => {
      const now = this.clock.now().getTime();
      const pairs: [number, number][] = [];
      const keywords = new Set<string>();
      for (const row of await rowsOf(uids, (low, high) => this.store.imap.metaBetween(source.id, low, high))) {
        const { uid, modseq } = await this.store.folders.allocateUid(target.id);
        const copied = await this.store.messages.copy(row.rowId, target.id, uid, modseq, await this.searchTextOf(row));
        await this.store.junk.copied(row.rowId, copied);
        // A move into or out of Junk is a judgment (src/services/mail/junk-judgments.ts): recorded in the copy's keywords, and trained.
        const flags = flagsAfterMove(row.flags, source.name, target.name);
        if (flags !== row.flags) {
          await this.store.imap.setFlags(copied, flags, modseq);
          await this.queueTraining(copied);
        }
        flags.keywords.forEach((keyword) => keywords.add(keyword));
        const event: MessageStoredEvent = {
          mailboxId: mailbox.id,
          accountId: mailbox.accountId,
          folder: target.name,
          uidValidity: String(target.uidValidity),
          uid: String(uid),
          storedAt: now,
        };
        await this.store.changes.record(MESSAGE_STORED, event);
        pairs.push([row.uid, uid]);
      }
      await this.store.folders.addKeywords(target.id, [...keywords]);
      return { uidValidity: target.uidValidity, pairs };
    });
  }

  /** MOVE (RFC 6851): the copy and the expunge of the originals in one transaction. */
  async move(mailbox: MailboxRecord, source: Folder, uids: readonly number[], target: Folder): Promise<CopyResult> {
    return await this.store.transaction(async () => {
      const copied = await this.copy(mailbox, source, uids, target);
      await this.expunge(
        mailbox,
        source,
        copied.pairs.map(([from]) => from),
      );
      return copied;
    });
  }

  /**
   * Removes messages for good (RFC 3501 section 6.4.3); their UIDs are never used again.
   * Returns the UIDs removed, ascending.
   */
  async expunge(mailbox: MailboxRecord, folder: Folder, uids: readonly number[]): Promise<number[]> {
    if (uids.length === 0) return [];
    return await this.store.transaction(async () => {
      const modseq = await this.store.folders.nextModseq(folder.id);
      const removed = await this.store.messages.remove(folder.id, uids, modseq);
      if (removed.length > 0) {
        const event: MessageRemovedEvent = { mailboxId: mailbox.id, folder: folder.name, uids: removed.map(String) };
        this.store.notice(MESSAGE_REMOVED, event);
      }
      return removed;
    });
  }

  /** Inside the caller's transaction: the message's training follows its judgment once this commits. */
  private async queueTraining(rowId: number): Promise<void> {
    await this.store.junk.queue(rowId);
    this.store.notice(JUNK_JUDGED, null);
  }

  /** The full-text entry of a copy, from the original's row and stored text; null when that has to be built first. */
  private async searchTextOf(row: MessageMeta): Promise<SearchText | null> {
    const content = await this.store.bodies.content(row.rowId);
    return content ? { subject: row.subject, participants: participantsOf(row), body: indexedText(content.text) } : null;
  }
}

/** UIDs further apart than this start a new range, so a sparse set never reads the rows between. */
const MAX_GAP = 64;

/** An ascending list as [low, high] ranges that cover it with few rows between its values. */
export const spans = (sorted: readonly number[]): [number, number][] => {
  const out: [number, number][] = [];
  for (const value of sorted) {
    const last = out[out.length - 1];
    if (last && value - last[1] <= MAX_GAP) last[1] = value;
    else out.push([value, value]);
  }
  return out;
};

/** The rows of `uids`, ascending, read range by range (`between` reads every row of a range). */
export const rowsOf = async <T extends { uid: number }>(uids: readonly number[], between: (low: number, high: number) => Promise<T[]>): Promise<T[]> => {
  const wanted = new Set(uids);
  const sorted = [...wanted].sort((a, b) => a - b);
  const out: T[] = [];
  for (const [low, high] of spans(sorted)) for (const row of await between(low, high)) if (wanted.has(row.uid)) out.push(row);
  return out;
};

const SYSTEM: readonly SystemFlag[] = ['seen', 'answered', 'flagged', 'deleted', 'draft'];

/** RFC 3501 section 6.4.6: FLAGS replaces, +FLAGS adds, -FLAGS removes; keywords alike. */
export const applyChange = (current: MessageFlags, change: FlagChange): MessageFlags => {
  const next = { ...current, keywords: [...current.keywords] };
  for (const flag of SYSTEM) {
    const named = change.system.has(flag);
    if (change.mode === 'replace') next[flag] = named;
    else if (named) next[flag] = change.mode === 'add';
  }
  const named = new Set(change.keywords);
  if (change.mode === 'replace') next.keywords = [...named];
  else if (change.mode === 'add') next.keywords = [...new Set([...current.keywords, ...named])];
  else next.keywords = current.keywords.filter((keyword) => !named.has(keyword));
  return next;
};

const sameFlags = (a: MessageFlags, b: MessageFlags): boolean =>
  SYSTEM.every((flag) => a[flag] === b[flag]) && a.keywords.length === b.keywords.length && a.keywords.every((keyword) => b.keywords.includes(keyword));
