import { judgmentOf, withJudgment, type JunkJudgment } from '../../core/junk.js';
import type { MessageFlags } from '../../core/types.js';
import { JUNK, TRASH } from './folder-names.js';

/**
 * The judgment a move (or copy) records, as mail clients mean it (docs/agents/junk.md): into
 * Junk is junk; out of Junk into any folder but Trash is not junk; deleting is neither.
 */
export const judgmentOfMove = (from: string, to: string): JunkJudgment => {
  if (to === JUNK && from !== JUNK) return 'junk';
  if (from === JUNK && to !== JUNK && to !== TRASH) return 'notJunk';
  return null;
};

/** The flags of a moved copy: its keywords record the move's judgment, when it makes one. */
export const flagsAfterMove = (flags: MessageFlags, from: string, to: string): MessageFlags => {
  const judgment = judgmentOfMove(from, to);
  return judgment === null ? flags : { ...flags, keywords: withJudgment(flags.keywords, judgment) };
};

/** Whether a flag change changed the judgment the keywords record (a training then follows). */
export const judgmentChanged = (before: MessageFlags, after: MessageFlags): boolean => judgmentOf(before.keywords) !== judgmentOf(after.keywords);
