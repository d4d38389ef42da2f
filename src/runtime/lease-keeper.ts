import type { Logger } from '../core/logger.js';

export interface LeaseKeeperWork {
  /** Renews the leases of this node's work in progress (NodeClaims.renew). */
  renew(): Promise<void>;
  /** Asks the leased queues to look for work, a dead node's claims whose lease ran out among it. */
  look(): void;
}

/**
 * The one timer of a node's leases (docs/design.md, "Several processes on one store"): every
 * third of the lease it renews this node's claims in progress, so they never run out while the
 * node lives, and kicks the leased queues (delivery, webhooks, inbound), which take over any
 * claim whose lease ran out. Another process's commits do not kick this one's queues, so this
 * look is also how a node sees work another node left behind. A kick finds nothing to do in a
 * few indexed reads.
 */
export class LeaseKeeper {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly leaseMs: number,
    private readonly work: LeaseKeeperWork,
    private readonly logger: Logger,
  ) {}

  start(): void {
    if (this.timer !== null) return;
    this.timer = setInterval(() => this.tick(), Math.max(1, Math.floor(this.leaseMs / 3)));
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  private tick(): void {
    this.work.renew().catch((error: unknown) => {
      // A busy or failing store: the next tick tries again, a third of a lease later.
      this.logger.error('renewing leases failed', { error: error instanceof Error ? error.message : String(error) });
    });
    this.work.look();
  }
}
