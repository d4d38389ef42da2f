import type { Clock } from '../../core/clock.js';
import { AppError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { tokenUnitsForCents } from '../../core/money.js';
import type { Invoice, PolygonPort } from '../../core/payments.js';
import type { Store } from '../../store/index.js';
import type { InvoiceApplier } from './apply.js';
import { finalBlockAt, settle, type ChainLook } from './settle.js';

/** The Polygon columns of a new invoice. */
export interface PolygonTerms {
  addressIndex: number;
  address: string;
  tokenContract: string;
  tokenAmount: string;
  startBlock: number;
}

/**
 * USDC on Polygon. Each invoice gets the next child address of the configured extended public key
 * (no address serves two invoices: docs/operators/payments.md), the exact amount in token units,
 * and the chain height when it was made; transfers are read from there.
 */
export class PolygonPayments {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly port: PolygonPort,
    private readonly applier: InvoiceApplier,
  ) {}

  /** The chain height first (the RPC must answer), then, in the caller's transaction, terms(). */
  async startBlock(): Promise<number> {
    try {
      return await this.port.reader.headBlock();
    } catch (error) {
      this.logger.warn('polygon rpc failed', { error: (error as Error).message });
      throw new AppError('unavailable', 'the Polygon RPC did not answer; no invoice was made, try again later');
    }
  }

  /** Runs inside the transaction that inserts the invoice, so an index is never given twice. */
  async terms(amountCents: number, startBlock: number): Promise<PolygonTerms> {
    const addressIndex = await this.store.invoices.nextAddressIndex();
    return {
      addressIndex,
      address: this.port.addressAt(addressIndex),
      tokenContract: this.port.tokenContract,
      tokenAmount: tokenUnitsForCents(amountCents, this.port.tokenDecimals).toString(),
      startBlock,
    };
  }

  /**
   * Reads the invoice address's transfers and settles what is final. An RPC failure is
   * `unavailable` and changes nothing.
   */
  async check(invoice: Invoice): Promise<void> {
    let look: ChainLook;
    try {
      look = await this.look(invoice);
    } catch (error) {
      this.logger.warn('polygon rpc failed', { token: invoice.token, error: (error as Error).message });
      throw new AppError('unavailable', 'the Polygon RPC did not answer; nothing was applied, try again later');
    }
    await this.apply(invoice.token, look);
  }

  private async look(invoice: Invoice): Promise<ChainLook> {
    const reader = this.port.reader;
    const head = await reader.headBlock();
    // Blocks up to the cursor have every transfer recorded; only those after it are read.
    const from = invoice.scannedBlock !== null ? invoice.scannedBlock + 1 : (invoice.startBlock as number);
    const transfers = head < from ? [] : await reader.transfersTo(invoice.address as string, from, head);
    const finalBlock = finalBlockAt(head, this.port.confirmations);
    const known = new Set((await this.store.invoices.transfersOf(invoice.token)).map((t) => `${t.txHash}:${t.logIndex}`));
    const blocks = new Set(transfers.filter((t) => !known.has(`${t.txHash}:${t.logIndex}`)).map((t) => t.blockNumber));
    const blockTimes = new Map<number, number>();
    for (const block of blocks) blockTimes.set(block, await reader.blockTime(block));
    const finalHeadTime = finalBlock >= 0 ? await reader.blockTime(finalBlock) : null;
    return { head, from, transfers, blockTimes, finalHeadTime };
  }

  /** One transaction: the new transfers recorded and the invoice's state changed together. */
  private async apply(token: string, look: ChainLook): Promise<void> {
    await this.store.transaction(async () => {
      const invoice = (await this.store.invoices.byToken(token)) as Invoice;
      const outcome = settle(invoice, await this.store.invoices.transfersOf(token), look, this.port.confirmations);
      const recordedAt = this.clock.now().getTime();
      for (const transfer of outcome.record) await this.store.invoices.recordTransfer({ ...transfer, recordedAt });
      const finalBlock = finalBlockAt(look.head, this.port.confirmations);
      if (finalBlock >= look.from) await this.store.invoices.advanceScan(token, finalBlock);
      const next = outcome.next;
      if (next === null) return;
      if (next.status === 'apply') await this.applier.apply(token);
      else if ('confirmations' in next) await this.store.invoices.markWaiting(token, next.status, next.confirmations);
      else await this.applier.close(token, next.status);
    });
  }
}
