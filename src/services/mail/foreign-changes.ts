import type { Store } from '../../store/index.js';
import type { FolderPosition } from '../../store/folders.js';
import type { MailboxChange, MailboxWatchers } from './watchers.js';

type Positions = Map<number, FolderPosition>;

/**
 * Tells watchers (IMAP IDLE, wait_for_email) of changes another process committed to their
 * mailboxes. The commit feed hears only this process's commits; another's are seen by a look
 * at the database after SQLite says one happened (Store.committedElsewhere): each watched
 * mailbox's folders are compared with where they stood at the last look. A folder's next UID
 * grows with every message stored in it and its mod-sequence with every flag change and
 * expunge, so the comparison misses nothing; the watchers read the details themselves.
 *
 * A look has two steps around the question whether another process committed since the last
 * one. First the mailboxes watched since the last look are measured; then, only when another
 * process did commit, every watched mailbox is measured again and compared. A mailbox first
 * measured in that same look cannot be compared (the other process may have committed after
 * its watch began and before it was measured): its watchers are told that any folder may have
 * changed, and re-read to find out.
 */
export class MailboxChangeScan {
  private readonly known = new Map<string, Positions>();
  private readonly measuredNow = new Set<string>();
  private membershipSeen = -1;

  constructor(
    private readonly store: Store,
    private readonly watchers: MailboxWatchers,
  ) {}

  /** The first step of a look: mailboxes no longer watched are forgotten, newly watched ones measured. */
  async measureNewWatches(): Promise<void> {
    this.measuredNow.clear();
    if (this.watchers.membershipVersion === this.membershipSeen) return;
    this.membershipSeen = this.watchers.membershipVersion;
    const watched = new Set(this.watchers.watchedMailboxes());
    for (const mailboxId of this.known.keys()) if (!watched.has(mailboxId)) this.known.delete(mailboxId);
    for (const mailboxId of watched) if (!this.known.has(mailboxId)) this.measuredNow.add(mailboxId);
    if (this.measuredNow.size > 0) await this.measure([...this.measuredNow]);
  }

  /** The second step, once another process committed: watchers are told what changed in their mailboxes. */
  async tellChanges(): Promise<void> {
    const watched = this.watchers.watchedMailboxes();
    if (watched.length === 0) return;
    const before = new Map(this.known);
    for (const [mailboxId, positions] of await this.measure(watched)) {
      const earlier = this.measuredNow.has(mailboxId) ? undefined : before.get(mailboxId);
      for (const change of earlier ? changesBetween(earlier, positions) : everyFolder(positions)) this.watchers.tell(mailboxId, change);
    }
    this.measuredNow.clear();
  }

  private async measure(mailboxIds: readonly string[]): Promise<Map<string, Positions>> {
    const measured = groupByMailbox(await this.store.folders.positionsOfMailboxes(mailboxIds), mailboxIds);
    for (const [mailboxId, positions] of measured) this.known.set(mailboxId, positions);
    return measured;
  }
}

const groupByMailbox = (rows: readonly FolderPosition[], mailboxIds: readonly string[]): Map<string, Positions> => {
  const grouped = new Map<string, Positions>(mailboxIds.map((mailboxId) => [mailboxId, new Map()]));
  for (const row of rows) grouped.get(row.mailboxId)?.set(row.id, row);
  return grouped;
};

/** What changed in a mailbox's folders between two looks. */
const changesBetween = (before: Positions, after: Positions): MailboxChange[] => {
  const changes: MailboxChange[] = [];
  for (const [id, old] of before) {
    const now = after.get(id);
    if (!now || now.name !== old.name) changes.push({ kind: 'folder', folder: old.name });
    else if (now.uidNext !== old.uidNext) changes.push({ kind: 'stored', folder: now.name });
    else if (now.highestModseq !== old.highestModseq) changes.push({ kind: 'flags', folder: now.name });
  }
  for (const [id, now] of after) if (!before.has(id)) changes.push({ kind: 'folder', folder: now.name });
  return changes;
};

/** Not measured before: any folder may have changed. */
const everyFolder = (positions: Positions): MailboxChange[] => [...positions.values()].map((folder) => ({ kind: 'stored', folder: folder.name }));
