import type { Invoice, InvoiceKind, InvoiceMethod, InvoiceStatus, RecordedTransfer, TransferRole } from '../../core/payments.js';

/** schema/payment.json: an invoice as the agent sees it (docs/design.md "Payment request"). */
export interface PaymentView {
  token: string;
  kind: InvoiceKind;
  method: InvoiceMethod;
  status: InvoiceStatus;
  amountCents: number;
  credits?: number;
  periods?: number;
  domainId?: string;
  expiresAt: string;
  createdAt: string;
  appliedAt?: string;
  checkoutUrl?: string;
  invoice?: PolygonInvoiceView;
}

/** The chain an invoice is paid on, as config `payments.polygon` names it. */
export interface PolygonChain {
  chainId: number;
  /** Confirmations a paying transfer needs (`payments.polygon.confirmations`, 128). */
  confirmations: number;
}

export interface PolygonInvoiceView {
  network: 'polygon';
  chainId: number;
  address: string;
  asset: 'USDC';
  contract: string;
  /** Integer token units. */
  amount: string;
  /** EIP-681: the ERC-20 transfer that pays the invoice, as a wallet (or its QR code) takes it. */
  uri: string;
  confirmationsRequired: number;
  /** The paying transfer's confirmations at the last look, while confirming. */
  confirmations?: number;
  /** Token units of the transfers that count as payment. */
  paid: string;
  transfers: TransferView[];
}

export interface TransferView {
  txHash: string;
  logIndex: number;
  blockNumber: number;
  from: string;
  amount: string;
  role: TransferRole;
  at: string;
}

const iso = (ms: number): string => new Date(ms).toISOString();

const transferView = (transfer: RecordedTransfer): TransferView => ({
  txHash: transfer.txHash,
  logIndex: transfer.logIndex,
  blockNumber: transfer.blockNumber,
  from: transfer.sender,
  amount: transfer.amount,
  role: transfer.role,
  at: iso(transfer.blockTime),
});

/** EIP-681 "transfer" of an ERC-20: `ethereum:<token>@<chain id>/transfer?address=<to>&uint256=<units>`. */
export const paymentUri = (contract: string, chainId: number, to: string, units: string): string =>
  `ethereum:${contract}@${chainId}/transfer?address=${to}&uint256=${units}`;

const polygonView = (invoice: Invoice, transfers: readonly RecordedTransfer[], chain: PolygonChain): PolygonInvoiceView => ({
  network: 'polygon',
  chainId: chain.chainId,
  address: invoice.address as string,
  asset: 'USDC',
  contract: invoice.tokenContract as string,
  amount: invoice.tokenAmount as string,
  uri: paymentUri(invoice.tokenContract as string, chain.chainId, invoice.address as string, invoice.tokenAmount as string),
  confirmationsRequired: chain.confirmations,
  ...(invoice.status === 'confirming' && invoice.confirmations !== null && { confirmations: invoice.confirmations }),
  paid: transfers
    .filter((t) => t.role === 'payment')
    .reduce((sum, t) => sum + BigInt(t.amount), 0n)
    .toString(),
  transfers: transfers.map(transferView),
});

export const paymentView = (invoice: Invoice, transfers: readonly RecordedTransfer[], chain: PolygonChain): PaymentView => ({
  token: invoice.token,
  kind: invoice.kind,
  method: invoice.method,
  status: invoice.status,
  amountCents: invoice.amountCents,
  ...(invoice.credits !== null && { credits: invoice.credits }),
  ...(invoice.periods !== null && { periods: invoice.periods }),
  ...(invoice.domainId !== null && { domainId: invoice.domainId }),
  expiresAt: iso(invoice.expiresAt),
  createdAt: iso(invoice.createdAt),
  ...(invoice.appliedAt !== null && { appliedAt: iso(invoice.appliedAt) }),
  ...(invoice.method === 'card' && invoice.checkoutUrl !== null && { checkoutUrl: invoice.checkoutUrl }),
  ...(invoice.method === 'polygon' && { invoice: polygonView(invoice, transfers, chain) }),
});
