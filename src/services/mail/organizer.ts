import { AppError } from '../../core/errors.js';
import type { Folder, Principal } from '../../core/types.js';
import type { MailboxRecord } from '../../store/accounts.js';
import type { Store } from '../../store/index.js';
import { requireFullKey, requirePermission } from '../access/auth.js';
import { canonicalFolderName, INBOX, specialUseOf, TRASH } from './folder-names.js';
import type { FolderService } from './folders.js';
import type { MailboxService } from './mailbox.js';
import type { MessageOps } from './message-ops.js';

export interface FolderView {
  name: string;
  specialUse: string | null;
  messages: number;
  unread: number;
  uidValidity: string;
  uidNext: number;
  subscribed: boolean;
}

export interface MessagePlace {
  uid: number;
  folder: string;
  uidValidity?: string;
}

export interface MovedView {
  id: string;
  folder: string;
  uidValidity: string;
  from: { id: string; folder: string };
}

export interface DeletedView {
  deleted: true;
  expunged: boolean;
  folder: string;
  id?: string;
  uidValidity?: string;
}

/**
 * What an agent does over REST that a person does in a mail client: list the folders with
 * their counts, move a message, delete one (to Trash; in Trash, for good). The same flag,
 * move and expunge code as IMAP, so an IMAP client sees each change at once (IDLE too).
 */
export class MailOrganizer {
  constructor(
    private readonly store: Store,
    private readonly mailboxes: MailboxService,
    private readonly folders: FolderService,
    private readonly ops: MessageOps,
  ) {}

  async listFolders(principal: Principal): Promise<{ folders: FolderView[] }> {
    requirePermission(principal, 'mail:read');
    const mailbox = await this.mailboxes.mailboxOfAccount(principal.accountId);
    const subscribed = new Set(await this.folders.subscriptions(mailbox));
    const folders = (await this.folders.counts(mailbox)).map(
      (folder): FolderView => ({
        name: folder.name,
        specialUse: specialUseOf(folder.name)?.slice(1).toLowerCase() ?? null,
        messages: folder.messageCount,
        unread: folder.unseen,
        uidValidity: String(folder.uidValidity),
        uidNext: folder.uidNext,
        subscribed: subscribed.has(folder.name),
      }),
    );
    return { folders: [...folders.filter((folder) => folder.name === INBOX), ...folders.filter((folder) => folder.name !== INBOX)] };
  }

  /** IMAP MOVE of one message (RFC 6851): a new UID in the target, none left in the source. */
  async move(principal: Principal, place: MessagePlace, to: string): Promise<MovedView> {
    requireFullKey(principal);
    const mailbox = await this.mailboxes.mailboxOfAccount(principal.accountId);
    const source = await this.located(mailbox, place);
    const target = await this.folders.open(mailbox, to);
    if (target.id === source.id) throw new AppError('invalid_input', `the message is in ${source.name} already`, { field: 'to' });
    const moved = await this.ops.move(mailbox, source, [place.uid], target);
    return {
      id: String(moved.pairs[0][1]),
      folder: target.name,
      uidValidity: String(target.uidValidity),
      from: { id: String(place.uid), folder: source.name },
    };
  }

  /** A mail client's delete: to Trash; in Trash, expunged (RFC 3501 section 6.4.3). */
  async delete(principal: Principal, place: MessagePlace): Promise<DeletedView> {
    requireFullKey(principal);
    const mailbox = await this.mailboxes.mailboxOfAccount(principal.accountId);
    const source = await this.located(mailbox, place);
    if (source.name === TRASH) {
      await this.ops.expunge(mailbox, source, [place.uid]);
      return { deleted: true, expunged: true, folder: source.name };
    }
    const moved = await this.move(principal, place, TRASH);
    return { deleted: true, expunged: false, folder: moved.folder, id: moved.id, uidValidity: moved.uidValidity };
  }

  /** The folder holding the message, checked as a read checks it: 409 on a changed uidValidity, 404 when it is not there. */
  private async located(mailbox: MailboxRecord, place: MessagePlace): Promise<Folder> {
    const folder = await this.folders.get(mailbox, canonicalFolderName(place.folder));
    if (place.uidValidity !== undefined && place.uidValidity !== String(folder.uidValidity)) {
      throw new AppError('conflict', `uidValidity of ${folder.name} is now ${folder.uidValidity}; list the folder again`);
    }
    if (!(await this.store.messages.summaryByUid(folder.id, place.uid))) throw new AppError('not_found', `no message ${place.uid} in ${folder.name}`);
    return folder;
  }
}
