/**
 * This process among the processes that serve one data folder (config `cluster.*`,
 * docs/design.md "Several processes on one store"): the name its claims carry, and how long a
 * claim stays its own without renewal.
 */
export interface NodeLease {
  nodeId: string;
  leaseMs: number;
}

/** The queues whose rows a node claims with a lease. */
export type LeasedQueue = 'delivery' | 'webhooks' | 'inbound';
