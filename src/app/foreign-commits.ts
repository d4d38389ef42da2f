import type { Logger } from '../core/logger.js';
import type { Services } from '../services/index.js';
import type { Store } from '../store/index.js';
import type { Queues } from './queues.js';

/**
 * How often this process asks SQLite whether another process committed (Store.committedElsewhere).
 * A change committed elsewhere must reach an IMAP IDLE client, a wait_for_email or an event
 * stream here within 100 ms (docs/design.md, "Several processes: wake-ups and exactness"): a
 * quarter of that leaves the rest for the look at the database and the answer on the wire.
 * A look with nothing committed elsewhere is one PRAGMA, so an idle server pays next to nothing.
 */
export const FOREIGN_COMMIT_POLL_MS = 25;

/**
 * The delivery queue is woken by another process's commits at most this often: that process
 * runs what it queued itself, so this only makes sure that work it leaves (it stopped) waits
 * for no long timer here; the claims are guarded, so two runs never send a recipient twice.
 */
export const DELIVERY_NUDGE_MS = 1_000;

/**
 * Wakes what waits here for changes other processes on the same data folder commit: the
 * watchers of mailboxes (IMAP IDLE, wait_for_email), the event streams and the delivery queue.
 * They read the database themselves, so a wake-up needs nothing from the process that
 * committed. The webhook and inbound queues are not woken: until their work is claimed with
 * leases, a run here could take rows another process is working on. Returns the stop.
 */
export const wakeOnForeignCommits = (store: Store, services: Services, queues: Queues, logger: Logger, pollMs = FOREIGN_COMMIT_POLL_MS): (() => void) => {
  let nudgeDue = false;
  let lastNudge = 0;
  const look = async (): Promise<void> => {
    await services.mailboxChangeScan.measureNewWatches();
    if (store.committedElsewhere()) {
      await services.mailboxChangeScan.tellChanges();
      await services.eventStreams.tellLoggedElsewhere();
      nudgeDue = true;
    }
    if (nudgeDue && Date.now() - lastNudge >= DELIVERY_NUDGE_MS) {
      nudgeDue = false;
      lastNudge = Date.now();
      queues.delivery.kick();
    }
  };
  const timer = setInterval(async () => {
    try {
      await look();
    } catch (error) {
      logger.warn('the look for commits of other processes failed', { error: error instanceof Error ? error.message : String(error) });
    }
  }, pollMs);
  timer.unref();
  return () => clearInterval(timer);
};
