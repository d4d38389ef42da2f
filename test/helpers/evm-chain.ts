import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import ganache from 'ganache';
import { createPublicClient, createWalletClient, http, type Abi } from 'viem';

const TOKEN = JSON.parse(readFileSync(new URL('../fixtures/erc20/TestToken.json', import.meta.url), 'utf8')) as { abi: Abi; bytecode: `0x${string}` };

export interface LocalChain {
  /** The chain's own JSON-RPC URL. */
  url: string;
  /** A loopback proxy to it that can be switched off (the RPC being down). */
  proxyUrl: string;
  setProxyDown(down: boolean): void;
  token: `0x${string}`;
  payer: `0x${string}`;
  transfer(to: string, amount: bigint): Promise<`0x${string}`>;
  mine(blocks: number): Promise<void>;
  /** Moves the chain's clock: later blocks are stamped this much later. */
  increaseTime(seconds: number): Promise<void>;
  blockNumber(): Promise<number>;
  close(): Promise<void>;
}

/**
 * A real EVM chain on loopback (ganache, in this process) with the checked-in test ERC-20
 * (test/fixtures/erc20, 6 decimals) deployed by the first account, which holds the supply.
 * Transactions are mined as they arrive; `mine` adds empty blocks.
 */
export const startLocalChain = async (): Promise<LocalChain> => {
  const server = ganache.server({ logging: { quiet: true }, chain: { chainId: 1337 }, wallet: { deterministic: true, totalAccounts: 2 } });
  await server.listen(0, '127.0.0.1');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const rpc = async (method: string, params: unknown[] = []): Promise<unknown> => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    const body = (await response.json()) as { result?: unknown; error?: { message: string } };
    if (body.error) throw new Error(`${method}: ${body.error.message}`);
    return body.result;
  };
  const [payer] = (await rpc('eth_accounts')) as `0x${string}`[];
  // ganache gives a transaction sent without a gas limit only 90,000: deploy and transfer set theirs.
  const wallet = createWalletClient({ account: payer, transport: http(url) });
  const reader = createPublicClient({ transport: http(url) });
  const deployHash = await wallet.deployContract({ abi: TOKEN.abi, bytecode: TOKEN.bytecode, args: [10n ** 15n], chain: null, gas: 2_000_000n });
  const deployed = await reader.getTransactionReceipt({ hash: deployHash });
  if (deployed.status !== 'success') throw new Error('the test token did not deploy');
  const token = deployed.contractAddress as `0x${string}`;
  const proxy = await startProxy(url);
  return {
    url,
    proxyUrl: proxy.url,
    setProxyDown: proxy.setDown,
    token,
    payer,
    transfer: async (to, amount) => {
      const hash = await wallet.writeContract({ address: token, abi: TOKEN.abi, functionName: 'transfer', args: [to, amount], chain: null, gas: 100_000n });
      const receipt = await reader.getTransactionReceipt({ hash });
      if (receipt.status !== 'success') throw new Error(`transfer ${hash} reverted`);
      return hash;
    },
    mine: async (blocks) => void (await rpc('evm_mine', [{ blocks }])),
    increaseTime: async (seconds) => void (await rpc('evm_increaseTime', [seconds])),
    blockNumber: async () => Number(await reader.getBlockNumber({ cacheTime: 0 })),
    close: async () => {
      await proxy.close();
      await server.close();
    },
  };
};

/** Forwards JSON-RPC POSTs; while down, drops every connection unanswered. */
const startProxy = async (target: string) => {
  let down = false;
  const server: Server = createServer(async (req, res) => {
    if (down) return void req.socket.destroy();
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const answer = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) });
    res.writeHead(answer.status, { 'content-type': 'application/json' });
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    setDown: (value: boolean) => void (down = value),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
};
