import type { Clock } from '../../core/clock.js';
import type { LeasedQueue, NodeLease } from '../../core/cluster.js';
import type { Store } from '../../store/index.js';

/**
 * This node's claims on queued work in progress (docs/design.md, "Several processes on one
 * store"). Every claim carries the node's id and a lease expiry; while the work runs the node
 * renews the lease (`renew`, every third of the lease: src/runtime/lease-keeper.ts), so no
 * other node takes it over. Work whose node died keeps its claim until the lease runs out, and
 * then whichever node looks first takes it over.
 */
export class NodeClaims {
  private readonly held: Record<LeasedQueue, Set<number>> = { delivery: new Set(), webhooks: new Set(), inbound: new Set() };

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    readonly node: NodeLease,
  ) {}

  get nodeId(): string {
    return this.node.nodeId;
  }

  /** When a claim made or renewed now runs out. */
  leaseUntil(now: number = this.clock.now().getTime()): number {
    return now + this.node.leaseMs;
  }

  /** The work on these rows started: renewed until `release`. */
  hold(queue: LeasedQueue, ids: Iterable<number>): void {
    for (const id of ids) this.held[queue].add(id);
  }

  /** The work on these rows ended (done, given back or failed): no longer renewed. */
  release(queue: LeasedQueue, ids: Iterable<number>): void {
    for (const id of ids) this.held[queue].delete(id);
  }

  heldIds(queue: LeasedQueue): number[] {
    return [...this.held[queue]];
  }

  /** Renews every lease this node holds: one job of the group commit, none when nothing is held. */
  async renew(): Promise<void> {
    const delivery = this.heldIds('delivery');
    const webhooks = this.heldIds('webhooks');
    const inbound = this.heldIds('inbound');
    if (delivery.length + webhooks.length + inbound.length === 0) return;
    const until = this.leaseUntil();
    await this.store.groupCommit(async () => {
      if (delivery.length > 0) await this.store.delivery.renew(delivery, this.nodeId, until);
      if (webhooks.length > 0) await this.store.webhookEvents.renew(webhooks, this.nodeId, until);
      if (inbound.length > 0) await this.store.inboundQueue.renew(inbound, this.nodeId, until);
    });
  }

  /**
   * At start: leases this node's name holds are from before it started (a crash, a kill), so
   * their work is not running; they are given up at once instead of waiting to run out. Delivery
   * claims are settled by DeliveryService.recoverClaims instead (a sent DATA must not be resent).
   */
  async releaseOwnAtStart(): Promise<void> {
    await this.store.transaction(async () => {
      await this.store.webhookEvents.releaseLeasesOf(this.nodeId);
      await this.store.inboundQueue.releaseClaimsOf(this.nodeId);
    });
  }
}
