import type { Folder } from '../core/types.js';
import { lowerBound, parseSequenceSet, resolveSet, sequenceOf } from './sequence.js';

/**
 * A session's view of its selected folder (RFC 3501 section 2.3.1.2): the UIDs it knows, in
 * order, whose positions are the message sequence numbers; the messages \Recent to it; and
 * how far it has heard of the folder's changes, as mod-sequences (RFC 7162). Expunges have a
 * cursor of their own, because they are held back while a FETCH, STORE or SEARCH answers.
 */
export class SelectedView {
  /** Mod-sequences of this session's own flag changes: already answered, not reported again. */
  private readonly own = new Set<number>();

  constructor(
    public folder: Folder,
    public uids: number[],
    readonly readOnly: boolean,
    readonly recent: Set<number>,
    /** Flag changes up to here are known. */
    public flagsAfter: number,
    /** Expunges up to here are known. */
    public expungedAfter: number,
    /** Keywords the last FLAGS response listed. */
    public keywords: string[],
  ) {}

  get exists(): number {
    return this.uids.length;
  }

  get lastUid(): number {
    return this.uids.length > 0 ? this.uids[this.uids.length - 1] : 0;
  }

  sequenceOf(uid: number): number {
    return sequenceOf(this.uids, uid);
  }

  has(uid: number): boolean {
    return this.sequenceOf(uid) !== 0;
  }

  /** The UIDs a sequence set names (UIDs with `byUid`); a sequence number past EXISTS is a BAD. */
  resolve(set: string, byUid: boolean): number[] {
    return resolveSet(parseSequenceSet(set), this.uids, byUid);
  }

  /** New mail: appended to the view, with the UIDs that are \Recent to this session. */
  add(fresh: readonly number[], recent: readonly number[]): void {
    // A loop, not push(...fresh): spreading more than about 120,000 arguments throws.
    for (const uid of fresh) this.uids.push(uid);
    for (const uid of recent) this.recent.add(uid);
  }

  /**
   * Takes expunged UIDs out of the view; returns their sequence numbers, highest first, which
   * is the order to send "* n EXPUNGE" in: each number is right when it is sent.
   */
  remove(gone: readonly number[]): number[] {
    const sequences = gone
      .map((uid) => this.sequenceOf(uid))
      .filter((sequence) => sequence > 0)
      .sort((a, b) => b - a);
    if (sequences.length === 0) return [];
    const drop = new Set(gone);
    this.uids = this.uids.filter((uid) => !drop.has(uid));
    for (const uid of gone) this.recent.delete(uid);
    return sequences;
  }

  /** UIDs of the view in `[low, high]`. */
  between(low: number, high: number): number[] {
    const out: number[] = [];
    for (let index = lowerBound(this.uids, low); index < this.uids.length && this.uids[index] <= high; index += 1) out.push(this.uids[index]);
    return out;
  }

  /** This session changed flags at `modseq`: its own answer already said so. */
  ownChange(modseq: number): void {
    this.own.add(modseq);
  }

  isOwn(modseq: number): boolean {
    return this.own.has(modseq);
  }

  /** Flag changes up to `modseq` are reported; own changes at or below it are forgotten. */
  flagsKnown(modseq: number): void {
    this.flagsAfter = Math.max(this.flagsAfter, modseq);
    for (const own of this.own) if (own <= this.flagsAfter) this.own.delete(own);
  }
}
