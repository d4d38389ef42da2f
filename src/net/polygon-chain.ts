import { secp256k1 } from '@noble/curves/secp256k1';
import { createPublicClient, http, parseAbiItem, type PublicClient } from 'viem';
import { HDKey, publicKeyToAddress } from 'viem/accounts';
import type { ChainReader, PolygonPort, TokenTransfer } from '../core/payments.js';

/** EIP-20: `Transfer(address indexed _from, address indexed _to, uint256 _value)`. */
const TRANSFER = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

/** Blocks per eth_getLogs call (about 33 minutes of Polygon blocks). */
const LOG_RANGE = 1000;

export interface PolygonChainOptions {
  rpcUrl: string;
  xpub: string;
  tokenContract: string;
  tokenDecimals: number;
  confirmations: number;
  timeoutMs?: number;
}

/** ERC-20 Transfer logs and block times over JSON-RPC, with viem. */
export class ViemChainReader implements ChainReader {
  private readonly client: PublicClient;

  constructor(
    rpcUrl: string,
    private readonly tokenContract: `0x${string}`,
    timeoutMs: number,
  ) {
    // No retries here: a failed look is retried by the next status call or watcher run.
    this.client = createPublicClient({ transport: http(rpcUrl, { timeout: timeoutMs, retryCount: 0 }) });
  }

  async headBlock(): Promise<number> {
    return Number(await this.client.getBlockNumber({ cacheTime: 0 }));
  }

  /** Read in ranges of LOG_RANGE blocks: public RPC providers refuse eth_getLogs over wider ones. */
  async transfersTo(address: string, fromBlock: number, toBlock: number): Promise<TokenTransfer[]> {
    const transfers: TokenTransfer[] = [];
    for (let start = fromBlock; start <= toBlock; start += LOG_RANGE) {
      const logs = await this.client.getLogs({
        address: this.tokenContract,
        event: TRANSFER,
        args: { to: address as `0x${string}` },
        fromBlock: BigInt(start),
        toBlock: BigInt(Math.min(toBlock, start + LOG_RANGE - 1)),
        strict: true,
      });
      for (const log of logs) {
        if (!log.removed)
          transfers.push({
            txHash: log.transactionHash,
            logIndex: log.logIndex,
            blockNumber: Number(log.blockNumber),
            from: log.args.from,
            amount: log.args.value,
          });
      }
    }
    return transfers;
  }

  async blockTime(blockNumber: number): Promise<number> {
    const block = await this.client.getBlock({ blockNumber: BigInt(blockNumber) });
    return Number(block.timestamp) * 1000;
  }
}

/**
 * Invoice addresses: child `index` (non-hardened, BIP-32) of the configured extended public
 * key, so the operator's wallet holding the matching private key can spend what each receives,
 * and this server never holds a spending key.
 */
export const addressDeriver = (xpub: string): ((index: number) => string) => {
  const parent = HDKey.fromExtendedKey(xpub);
  return (index) => {
    const child = parent.deriveChild(index);
    if (!child.publicKey) throw new Error(`no public key at index ${index}`);
    const uncompressed = secp256k1.ProjectivePoint.fromHex(child.publicKey).toHex(false);
    return publicKeyToAddress(`0x${uncompressed}`);
  };
};

export const polygonPort = (options: PolygonChainOptions): PolygonPort => ({
  reader: new ViemChainReader(options.rpcUrl, options.tokenContract as `0x${string}`, options.timeoutMs ?? 10_000),
  addressAt: addressDeriver(options.xpub),
  tokenContract: options.tokenContract,
  tokenDecimals: options.tokenDecimals,
  confirmations: options.confirmations,
});
