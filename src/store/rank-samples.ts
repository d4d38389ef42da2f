import type { Db } from './db.js';
import { Repo } from './repo.js';

/** At most this many messages of a folder lie between two samples (tests pass a small one). */
export const RANK_SAMPLE_SPACING = 4096;

/**
 * For a query on `folders`: how many of the folder's messages have a UID at or above its newest
 * sample (all of them when it has none), i.e. how many arrived since that sample was taken.
 */
export const SINCE_NEWEST_SAMPLE = `message_count - coalesce(
  (SELECT below FROM folder_rank_samples s WHERE s.folder_id = folders.id ORDER BY s.uid DESC LIMIT 1), 0)`;

/** How a page of the list walks the (folder_id, uid) index: `skip` entries, then `take`, from the newest down or from `fromUid` up. */
export interface PageWalk {
  newestFirst: boolean;
  fromUid: number;
  skip: number;
  take: number;
}

/**
 * Rank samples (migration 072): a row (folder, uid, below) says that `below` messages of the
 * folder have a UID lower than `uid`. The message with that UID may be gone since: the count
 * stays true of the UID. A new message always takes the folder's highest UID, so appends never
 * change a sample; a removal lowers every sample above the removed UID. With a sample at every
 * `spacing` messages, a page at any offset skips fewer than `spacing` index entries.
 */
export class RankSampleRepo extends Repo {
  constructor(
    db: Db,
    readonly spacing: number = RANK_SAMPLE_SPACING,
  ) {
    super(db);
  }

  /** Inside the transaction that gives `uid`, the folder's highest, to a message: `below` messages are under it. */
  add(folderId: number, uid: number, below: number): void {
    this.sql('INSERT INTO folder_rank_samples (folder_id, uid, below) VALUES (?, ?, ?)').run(folderId, uid, below);
  }

  /** Inside the transaction that removed the messages with these UIDs (ascending) from the folder. */
  removed(folderId: number, uids: readonly number[]): void {
    if (uids.length === 0) return;
    const samples = this.sql('SELECT uid FROM folder_rank_samples WHERE folder_id = ? AND uid > ? ORDER BY uid').pluck().all(folderId, uids[0]) as number[];
    const lower = this.sql('UPDATE folder_rank_samples SET below = below - ? WHERE folder_id = ? AND uid > ?');
    for (const run of runsUnderSamples(samples, uids)) lower.run(run.count, folderId, run.last);
    this.thin(folderId, uids[0], uids[uids.length - 1]);
  }

  /**
   * Drops the samples that removals made needless: each whose neighbours (the folder's start or
   * count at the ends) are at most `spacing` apart without it. Pages still skip fewer than
   * `spacing` entries, and a folder that keeps little of much mail does not pile up samples that
   * every older removal has to lower. Only the stretches between `low` and `high`, the lowest and
   * highest UID removed, got shorter, so only the samples on their edges are looked at.
   */
  private thin(folderId: number, low: number, high: number): void {
    const count = this.sql('SELECT message_count FROM folders WHERE id = ?').pluck().get(folderId) as number;
    const [last, before] = this.sql('SELECT uid, below FROM folder_rank_samples WHERE folder_id = ? AND uid <= ? ORDER BY uid DESC LIMIT 2').all(
      folderId,
      low,
    ) as Sample[];
    const inside = this.sql('SELECT uid, below FROM folder_rank_samples WHERE folder_id = ? AND uid > ? AND uid <= ? ORDER BY uid').all(
      folderId,
      low,
      high,
    ) as Sample[];
    const [next, after] = this.sql('SELECT uid, below FROM folder_rank_samples WHERE folder_id = ? AND uid > ? ORDER BY uid LIMIT 2').all(
      folderId,
      high,
    ) as Sample[];
    const candidates = [last, ...inside, next].filter((sample) => sample !== undefined);
    const drop = this.sql('DELETE FROM folder_rank_samples WHERE folder_id = ? AND uid = ?');
    for (const uid of needless(candidates, before?.below ?? 0, after?.below ?? count, this.spacing)) drop.run(folderId, uid);
  }

  /**
   * The walk for `limit` messages at `offset` from the newest of the folder's `count`, or null
   * for an empty page. The page is ranks `first` .. `first + take - 1` counted from the oldest;
   * it starts at the sample with the greatest `below` not above `first` (the folder's start
   * when there is none), unless skipping `offset` entries from the newest is shorter.
   */
  walk(folderId: number, count: number, limit: number, offset: number): PageWalk | null {
    if (offset >= count || limit <= 0) return null;
    const first = Math.max(0, count - offset - limit);
    const take = count - offset - first;
    // `below` grows with `uid`, so the highest UID whose `below` fits has the greatest one.
    const sample = (this.sql('SELECT uid, below FROM folder_rank_samples WHERE folder_id = ? AND below <= ? ORDER BY uid DESC LIMIT 1').get(folderId, first) as
      | Sample
      | undefined) ?? { uid: 0, below: 0 };
    const skip = first - sample.below;
    return offset <= skip ? { newestFirst: true, fromUid: 0, skip: offset, take } : { newestFirst: false, fromUid: sample.uid, skip, take };
  }
}

interface Sample {
  uid: number;
  below: number;
}

/**
 * The UIDs of consecutive samples (ascending, between bounds whose `below` are `start` and `end`)
 * that can go with every stretch between those kept still at most `spacing`.
 */
export const needless = (samples: readonly Sample[], start: number, end: number, spacing: number): number[] => {
  const out: number[] = [];
  let kept = start;
  samples.forEach((sample, i) => {
    const next = samples[i + 1]?.below ?? end;
    if (next - kept <= spacing) out.push(sample.uid);
    else kept = sample.below;
  });
  return out;
};

/**
 * Removed UIDs (ascending) grouped into runs that no sample separates, with the last UID of each
 * run: every sample above that run has `count` fewer messages below it. UIDs above the newest
 * sample lower nothing and make no run.
 */
export const runsUnderSamples = (samples: readonly number[], uids: readonly number[]): { last: number; count: number }[] => {
  const runs: { sample: number; last: number; count: number }[] = [];
  let next = 0;
  for (const uid of uids) {
    while (next < samples.length && samples[next] <= uid) next += 1;
    if (next === samples.length) break;
    const run = runs.at(-1);
    if (run?.sample === next) {
      run.last = uid;
      run.count += 1;
    } else runs.push({ sample: next, last: uid, count: 1 });
  }
  return runs.map(({ last, count }) => ({ last, count }));
};
