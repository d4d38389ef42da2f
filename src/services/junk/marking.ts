import { AppError } from '../../core/errors.js';
import { withJudgment, type JunkJudgment } from '../../core/junk.js';
import type { Folder, Principal } from '../../core/types.js';
import type { Store } from '../../store/index.js';
import { requirePermission } from '../access/auth.js';
import { canonicalFolderName, INBOX, JUNK } from '../mail/folder-names.js';
import type { FolderService } from '../mail/folders.js';
import type { MailboxService } from '../mail/mailbox.js';
import type { MessageOps } from '../mail/message-ops.js';
import type { MessagePlace } from '../mail/organizer.js';
import type { JunkTrainingService } from './training.js';

export interface JunkMarkView {
  id: string;
  folder: string;
  uidValidity: string;
  junk: boolean;
  /** Whether the mailbox's model already counts the judgment (false only when its training failed for now and is queued). */
  trained: boolean;
  from: { id: string; folder: string };
}

/**
 * POST /api/v1/agent/email/{id}/junk (docs/agents/junk.md): the agent's judgment. The
 * message gets $Junk or $NotJunk (the keywords IMAP clients set), moves to Junk, or out of
 * Junk to INBOX, in one transaction; its training follows before the answer. A full key, the
 * agent's owner, or a limited key with mail:read and mail:junk.
 */
export class JunkMarking {
  constructor(
    private readonly store: Store,
    private readonly mailboxes: MailboxService,
    private readonly folders: FolderService,
    private readonly ops: MessageOps,
    private readonly training: JunkTrainingService,
  ) {}

  async mark(principal: Principal, place: MessagePlace, junk: boolean): Promise<JunkMarkView> {
    requirePermission(principal, 'mail:read');
    requirePermission(principal, 'mail:junk');
    const judgment: JunkJudgment = junk ? 'junk' : 'notJunk';
    const { view, rowId } = await this.judgeAndMove(principal.accountId, place, judgment);
    await this.training.catchUp();
    return { ...view, junk, trained: !(await this.store.junk.isQueued(rowId)) };
  }

  /** The message's view where it is now, and its row there. */
  private async judgeAndMove(
    accountId: string,
    place: MessagePlace,
    judgment: JunkJudgment,
  ): Promise<{ view: Omit<JunkMarkView, 'junk' | 'trained'>; rowId: number }> {
    const { mailbox, folder, summary } = await this.mailboxes.locate(accountId, {
      uid: place.uid,
      folder: canonicalFolderName(place.folder),
      uidValidity: place.uidValidity,
    });
    const target = this.targetOf(folder, judgment);
    return await this.store.transaction(async () => {
      const keywords = withJudgment(summary.keywords, judgment);
      await this.ops.setFlags(mailbox, folder, [summary.uid], {
        mode: 'remove',
        system: new Set(),
        keywords: summary.keywords.filter((keyword) => !keywords.includes(keyword)),
      });
      await this.ops.setFlags(mailbox, folder, [summary.uid], { mode: 'add', system: new Set(), keywords });
      const from = { id: String(summary.uid), folder: folder.name };
      if (target === null) return { view: { id: from.id, folder: folder.name, uidValidity: String(folder.uidValidity), from }, rowId: summary.rowId };
      const targetFolder = await this.folders.open(mailbox, target);
      const [pair] = (await this.ops.move(mailbox, folder, [summary.uid], targetFolder)).pairs;
      const copy = pair && (await this.store.messages.summaryByUid(targetFolder.id, pair[1]));
      if (!copy) throw new AppError('not_found', `no message ${summary.uid} in ${folder.name}`);
      return { view: { id: String(copy.uid), folder: targetFolder.name, uidValidity: String(targetFolder.uidValidity), from }, rowId: copy.rowId };
    });
  }

  /** Junk goes to Junk; not junk leaves Junk for INBOX, and stays where it is elsewhere. */
  private targetOf(folder: Folder, judgment: JunkJudgment): string | null {
    if (judgment === 'junk') return folder.name === JUNK ? null : JUNK;
    return folder.name === JUNK ? INBOX : null;
  }
}
