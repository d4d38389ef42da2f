import type { Invoice, InvoiceStatus, RecordedTransfer, TokenTransfer, TransferRole } from '../../core/payments.js';
import { sumUnits } from '../../core/money.js';

/** What one look at the chain found for an invoice address. */
export interface ChainLook {
  head: number;
  /** The first block read. */
  from: number;
  /** Every Transfer to the address from `from` to `head`, any order. */
  transfers: readonly TokenTransfer[];
  /** Timestamps (ms) of the blocks of the transfers not recorded yet. */
  blockTimes: ReadonlyMap<number, number>;
  /** Timestamp (ms) of the newest final block; null when no block is final yet. */
  finalHeadTime: number | null;
}

export interface Settlement {
  /** Final transfers to record now, in chain order, each with its role. */
  record: Omit<RecordedTransfer, 'recordedAt'>[];
  /** The invoice's next state: `apply` when paid in full by final transfers. */
  next:
    | { status: 'apply' }
    | { status: Extract<InvoiceStatus, 'underpaid' | 'expired'> }
    | { status: 'pending' | 'confirming'; confirmations: number | null }
    | null;
}

/** The last block whose transfers have `confirmations` confirmations at `head` (a block's own counts as one). */
export const finalBlockAt = (head: number, confirmations: number): number => head - confirmations + 1;

const byChainOrder = (a: TokenTransfer, b: TokenTransfer): number => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex;

/**
 * Decides, from one look at the chain, which transfers become recorded and what the invoice
 * becomes. A transfer counts once it is final (`payments.polygon.confirmations`, 128:
 * docs/operators/payments.md); one in a block stamped after the expiry is `late`, one after the amount
 * was reached is `duplicate`; neither ever counts. The invoice expires (or is underpaid)
 * only once the final chain has passed its expiry, so a transfer made in time but still
 * confirming is never lost.
 */
export const settle = (invoice: Invoice, recorded: readonly RecordedTransfer[], look: ChainLook, confirmations: number): Settlement => {
  const finalBlock = finalBlockAt(look.head, confirmations);
  const known = new Set(recorded.map((t) => `${t.txHash}:${t.logIndex}`));
  const amount = BigInt(invoice.tokenAmount as string);
  let paid = sumUnits(recorded.filter((t) => t.role === 'payment').map((t) => t.amount));
  const open = invoice.status === 'pending' || invoice.status === 'confirming';
  const record: Settlement['record'] = [];
  for (const transfer of [...look.transfers].sort(byChainOrder)) {
    if (transfer.blockNumber > finalBlock || known.has(`${transfer.txHash}:${transfer.logIndex}`)) continue;
    const blockTime = look.blockTimes.get(transfer.blockNumber) as number;
    let role: TransferRole = 'payment';
    if (blockTime > invoice.expiresAt) role = 'late';
    else if (!open || paid >= amount) role = 'duplicate';
    if (role === 'payment') paid += transfer.amount;
    record.push({
      invoiceToken: invoice.token,
      txHash: transfer.txHash,
      logIndex: transfer.logIndex,
      blockNumber: transfer.blockNumber,
      blockTime,
      sender: transfer.from,
      amount: transfer.amount.toString(),
      role,
    });
  }
  if (!open) return { record, next: null };
  if (paid >= amount) return { record, next: { status: 'apply' } };
  if (look.finalHeadTime !== null && look.finalHeadTime > invoice.expiresAt) {
    return { record, next: { status: paid > 0n ? 'underpaid' : 'expired' } };
  }
  return { record, next: waiting(look, finalBlock, amount - paid, invoice.expiresAt) };
};

/**
 * Confirming when transfers made in time but not yet final would pay what is missing; the
 * confirmations shown are those of the transfer that completes the amount.
 */
const waiting = (look: ChainLook, finalBlock: number, missing: bigint, expiresAt: number): Settlement['next'] => {
  let sum = 0n;
  for (const transfer of [...look.transfers].sort(byChainOrder)) {
    if (transfer.blockNumber <= finalBlock || (look.blockTimes.get(transfer.blockNumber) ?? 0) > expiresAt) continue;
    sum += transfer.amount;
    if (sum >= missing) return { status: 'confirming', confirmations: look.head - transfer.blockNumber + 1 };
  }
  return { status: 'pending', confirmations: null };
};
