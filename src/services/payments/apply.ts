import type { Clock } from '../../core/clock.js';
import { DAYS_PER_PERIOD } from '../../core/money.js';
import type { HostingLedger, Invoice } from '../../core/payments.js';
import type { Logger } from '../../core/logger.js';
import type { Store } from '../../store/index.js';

/**
 * Applies a paid invoice: in one transaction its state becomes `applied` and the credits or
 * the hosting are granted. The state change is guarded (only an open invoice moves), so any
 * number of racing callers apply it once.
 */
export class InvoiceApplier {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly hosting: HostingLedger,
  ) {}

  /** True when this call applied it; false when it was no longer open. */
  async apply(token: string): Promise<boolean> {
    const applied = await this.store.transaction(async () => {
      const invoice = await this.store.invoices.byToken(token);
      if (!invoice) return null;
      if (invoice.kind === 'domain_addon' && (await this.hosting.holderOf(invoice.domainId as string)) !== invoice.accountId) {
        // The domain was deleted (or moved) before the payment arrived: nothing to extend, so
        // the invoice is canceled, and the payment is the operator's to refund.
        if (await this.store.invoices.closeOpen(token, 'canceled', null)) this.logger.warn('payment for a domain that is gone: canceled, refund it', { token });
        return null;
      }
      if (!(await this.store.invoices.closeOpen(token, 'applied', this.clock.now().getTime()))) return null;
      await this.grant(invoice);
      return invoice;
    });
    if (applied) this.logger.info('payment applied', { token, kind: applied.kind, method: applied.method, amountCents: applied.amountCents });
    return applied !== null;
  }

  /** Purchases do not raise sending limits (docs/agents/payments.md): credits only, the sending state is untouched. */
  private async grant(invoice: Invoice): Promise<void> {
    if (invoice.kind === 'mail_credits') {
      await this.store.accounts.addCredits(invoice.accountId, invoice.credits as number);
      return;
    }
    const days = (invoice.periods as number) * DAYS_PER_PERIOD;
    if (invoice.kind === 'domain_hosting') await this.hosting.extendHosting(invoice.accountId, days, invoice.token);
    else await this.hosting.extendAddon(invoice.domainId as string, days, invoice.token);
  }

  /** An open invoice that can no longer be paid: expired, underpaid or canceled. */
  async close(token: string, status: 'expired' | 'underpaid' | 'canceled'): Promise<boolean> {
    return await this.store.transaction(() => this.store.invoices.closeOpen(token, status, null));
  }
}
