import { flagsResponse, flagsText } from './flags.js';
import { uidSetText } from './sequence.js';
import type { ImapServices } from './services.js';
import type { Chunk } from './format.js';
import type { SelectedView } from './view.js';

/** What reporting changes needs of a session (src/imap/session.ts). */
export interface ReportingSession {
  readonly view: SelectedView | null;
  readonly state: string;
  readonly services: Pick<ImapServices, 'imap'>;
  readonly qresync: boolean;
  readonly condstore: boolean;
  readonly output: { write(chunks: readonly Chunk[]): Promise<void> };
  untagged(chunks: readonly Chunk[]): Promise<void>;
}

/** FETCH responses written per socket write while reporting many flag changes. */
const BATCH = 256;

/**
 * Tells the client what changed in its selected folder since it last heard (RFC 3501
 * section 7: untagged responses may come with any command's answer): expunges as
 * "* n EXPUNGE" (or "* VANISHED uids" once QRESYNC is on, RFC 7162 section 3.2.10) unless
 * held back, flag changes as "* n FETCH (FLAGS ...)" (with MODSEQ once CONDSTORE is on),
 * then new mail as "* n EXISTS" and "* n RECENT". Returns false when the folder was deleted
 * under the session, which then ends it (after the command's answer, as Dovecot does).
 */
export const reportChanges = async (session: ReportingSession, expunges: boolean): Promise<boolean> => {
  const view = session.view;
  if (!view || session.state === 'logout') return true;
  const changes = await session.services.imap.changes(view.folder, {
    lastUid: view.lastUid,
    flagsAfter: view.flagsAfter,
    expungedAfter: view.expungedAfter,
    takeRecent: !view.readOnly,
  });
  if (!changes.folder) return false;
  view.folder = changes.folder;
  if (expunges) {
    const gone = changes.gone.filter((uid) => view.has(uid));
    if (gone.length > 0 && session.qresync) {
      view.remove(gone);
      await session.untagged([`VANISHED ${uidSetText(gone)}`]);
    } else {
      const sequences = view.remove(gone);
      for (let start = 0; start < sequences.length; start += BATCH) {
        await session.output.write(sequences.slice(start, start + BATCH).map((sequence) => `* ${sequence} EXPUNGE\r\n`));
      }
    }
    view.expungedAfter = changes.folder.highestModseq;
  }
  if (changes.flags.length > 0 || changes.fresh.length > 0) {
    const keywords = await session.services.imap.keywords(changes.folder);
    if (keywords.length !== view.keywords.length) {
      // RFC 3501 section 7.2.6: a new keyword in the folder is announced with FLAGS first.
      view.keywords = keywords;
      await session.untagged([flagsResponse(keywords)]);
    }
  }
  const lines: string[] = [];
  for (const row of changes.flags) {
    const sequence = view.sequenceOf(row.uid);
    if (sequence === 0 || view.isOwn(row.modseq)) continue;
    const modseq = session.condstore ? ` MODSEQ (${row.modseq})` : '';
    lines.push(`* ${sequence} FETCH (UID ${row.uid} FLAGS ${flagsText(row.flags, view.recent.has(row.uid))}${modseq})\r\n`);
    if (lines.length >= BATCH) await session.output.write(lines.splice(0));
  }
  if (lines.length > 0) await session.output.write(lines);
  view.flagsKnown(changes.folder.highestModseq);
  if (changes.fresh.length > 0) {
    view.add(changes.fresh, changes.recent);
    await session.untagged([`${view.exists} EXISTS`]);
    await session.untagged([`${view.recent.size} RECENT`]);
  }
  return true;
};
