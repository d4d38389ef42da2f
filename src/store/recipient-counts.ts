import { Repo } from './repo.js';

/** Seconds kept per account: past the sliding minute, with room for a clock that steps back. */
const SECONDS_KEPT = 120;

/**
 * Charged recipients per account and day, and per account and second (migration 87): the
 * sending limits read a count in a few rows, whatever the account's volume. Written in the
 * transaction that inserts the recipients (SubmissionRepo.insert), so a count is exact, across
 * processes too. A charged recipient stays counted when its credit is refunded, as the limits
 * have always counted it.
 */
export class RecipientCountRepo extends Repo {
  /** `charged` recipients of the account inserted at `at`, on the day that starts at `dayStart`. */
  add(accountId: string, at: number, dayStart: number, charged: number): void {
    if (charged === 0) return;
    const second = Math.floor(at / 1000);
    this.sql(
      `INSERT INTO recipient_second_counts (account_id, second, recipients) VALUES (?, ?, ?)
       ON CONFLICT (account_id, second) DO UPDATE SET recipients = recipients + excluded.recipients`,
    ).run(accountId, second, charged);
    this.sql('DELETE FROM recipient_second_counts WHERE account_id = ? AND second < ?').run(accountId, second - SECONDS_KEPT);
    const counted = this.sql('UPDATE recipient_day_counts SET recipients = recipients + ? WHERE account_id = ? AND day_start = ?').run(
      charged,
      accountId,
      dayStart,
    ).changes;
    if (counted === 0) this.startDay(accountId, dayStart);
  }

  /** Charged recipients of the account since `dayStart` (a day's start, as `add` was given it). */
  today(accountId: string, dayStart: number): number {
    const kept = this.sql('SELECT recipients FROM recipient_day_counts WHERE account_id = ? AND day_start = ?').pluck().get(accountId, dayStart) as
      | number
      | undefined;
    return kept ?? this.countRows(accountId, dayStart, Number.MAX_SAFE_INTEGER);
  }

  /**
   * Charged recipients of the account created at `since` or later: the whole seconds from their
   * counts, the part of a second at the start from the rows themselves.
   */
  since(accountId: string, since: number): number {
    const firstWholeSecond = Math.ceil(since / 1000);
    const partEnd = firstWholeSecond * 1000;
    return this.fromSecond(accountId, firstWholeSecond) + (since < partEnd ? this.countRows(accountId, since, partEnd) : 0);
  }

  /**
   * At least `since` would answer, from the counts alone: the second `since` falls in counted
   * whole. Enough to let a send through that is under its limit even so, without reading rows.
   */
  sinceAtMost(accountId: string, since: number): number {
    return this.fromSecond(accountId, Math.floor(since / 1000));
  }

  private fromSecond(accountId: string, second: number): number {
    return this.sql('SELECT coalesce(sum(recipients), 0) FROM recipient_second_counts WHERE account_id = ? AND second >= ?')
      .pluck()
      .get(accountId, second) as number;
  }

  /** The day's first count: every charged recipient of the day so far, this insert's included; older days go. */
  private startDay(accountId: string, dayStart: number): void {
    this.sql('INSERT INTO recipient_day_counts (account_id, day_start, recipients) VALUES (?, ?, ?)').run(
      accountId,
      dayStart,
      this.countRows(accountId, dayStart, Number.MAX_SAFE_INTEGER),
    );
    this.sql('DELETE FROM recipient_day_counts WHERE account_id = ? AND day_start < ?').run(accountId, dayStart);
  }

  private countRows(accountId: string, from: number, to: number): number {
    return this.sql('SELECT count(*) FROM submission_recipients WHERE account_id = ? AND created_at >= ? AND created_at < ? AND credit_reserved = 1')
      .pluck()
      .get(accountId, from, to) as number;
  }
}
