import t from 'tap';
import { HDKey, hdKeyToAccount } from 'viem/accounts';
import { startApp } from './helpers/app.js';
import { creditsOf } from './helpers/agents.js';
import { startLocalChain } from './helpers/evm-chain.js';

/**
 * USDC on Polygon against a real EVM chain (ganache on loopback, one for this file) with the
 * test ERC-20: real transfers, blocks mined past 128 confirmations. The cases share the chain
 * and run in order: the last ones move the chain's clock past every invoice's expiry.
 */
const chain = await startLocalChain();
t.teardown(() => chain.close());
const master = HDKey.fromMasterSeed(Buffer.alloc(32, 7));
const xpub = master.derive("m/44'/60'/0'/0").publicExtendedKey;
const app = await startApp(t, {
  funding: { paused: false },
  // The watcher's cron is left to a date no test reaches; the cases call its run themselves.
  payments: { polygon: { rpcUrl: chain.proxyUrl, xpub, tokenContract: chain.token, tokenDecimals: 6, watchSchedule: '0 0 0 1 1 *' } },
});
const agent = await app.register();
const key = agent.apiKey;
let orders = 0;

const invoiceFor = async (dollars: number) => {
  const response = await app.api('POST', '/api/v1/agent/payment', {
    key,
    body: { kind: 'mail_credits', method: 'polygon', amountCents: dollars * 100 },
    headers: { 'idempotency-key': `order-${(orders += 1)}` },
  });
  if (response.status !== 200) throw new Error(`invoice: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
};
const status = (token: string) => app.api('GET', `/api/v1/agent/payment/status/${token}`, { key });
const units = (dollars: number): bigint => BigInt(dollars) * 1_000_000n;

t.test('an invoice: a fresh derived address, the exact USDC amount in token units, an expiry; the same key answers the same invoice', async (t) => {
  const first = await invoiceFor(2);
  t.match(first, {
    status: 'pending',
    amountCents: 200,
    credits: 20_000,
    invoice: { network: 'polygon', asset: 'USDC', amount: '2000000', confirmationsRequired: 128, paid: '0', transfers: [] },
  });
  t.equal(first.invoice.contract.toLowerCase(), chain.token.toLowerCase());
  t.equal(first.invoice.address, hdKeyToAccount(master, { addressIndex: 0 }).address, 'child 0 of the xpub: the holder of the seed can spend it');
  t.ok(Date.parse(first.expiresAt) > Date.now() + 59 * 60_000);
  const again = await app.api('POST', '/api/v1/agent/payment', {
    key,
    body: { kind: 'mail_credits', method: 'polygon', amountCents: 200 },
    headers: { 'idempotency-key': `order-${orders}` },
  });
  t.same(again.body, first, 'same key and body: the same invoice and address');
  const second = await invoiceFor(2);
  t.equal(second.invoice.address, hdKeyToAccount(master, { addressIndex: 1 }).address, 'the next invoice gets the next address, never a shared one');
});

t.test('exact payment: applied by the watcher once its block has 128 confirmations', async (t) => {
  const invoice = await invoiceFor(3);
  const before = await creditsOf(app, key);
  await chain.transfer(invoice.invoice.address, units(3));
  await chain.mine(127);
  t.same(await app.app.services.payments.watchPolygon(), { checked: 3, failed: 0 });
  t.equal((await status(invoice.token)).body.status, 'applied');
  t.equal(await creditsOf(app, key), before + 30_000);
  const shown = (await status(invoice.token)).body;
  t.match(shown.invoice, { paid: '3000000', transfers: [{ amount: '3000000', role: 'payment', from: new RegExp(chain.payer.slice(2), 'i') }] });
  await app.app.services.payments.watchPolygon();
  t.equal(await creditsOf(app, key), before + 30_000, 'applied once');
});

t.test('a slow confirmation: confirming with its count until the 128th, then applied', async (t) => {
  const invoice = await invoiceFor(1);
  const before = await creditsOf(app, key);
  await chain.transfer(invoice.invoice.address, units(1));
  let shown = (await status(invoice.token)).body;
  t.match(shown, { status: 'confirming', invoice: { confirmations: 1, paid: '0' } });
  await chain.mine(100);
  shown = (await status(invoice.token)).body;
  t.match(shown, { status: 'confirming', invoice: { confirmations: 101 } });
  await chain.mine(26);
  t.match((await status(invoice.token)).body, { status: 'confirming', invoice: { confirmations: 127 } });
  t.equal(await creditsOf(app, key), before, 'nothing before 128 confirmations');
  await chain.mine(1);
  t.match((await status(invoice.token)).body, { status: 'applied' });
  t.equal(await creditsOf(app, key), before + 10_000);
});

t.test('two payments to one invoice: applied once, the second recorded as a duplicate, and a later one too', async (t) => {
  const invoice = await invoiceFor(1);
  const before = await creditsOf(app, key);
  await chain.transfer(invoice.invoice.address, units(1));
  await chain.transfer(invoice.invoice.address, units(1));
  await chain.mine(128);
  const shown = (await status(invoice.token)).body;
  t.equal(shown.status, 'applied');
  t.same(
    shown.invoice.transfers.map((x: any) => x.role),
    ['payment', 'duplicate'],
  );
  t.equal(shown.invoice.paid, '1000000');
  await chain.transfer(invoice.invoice.address, units(1));
  await chain.mine(128);
  await app.app.services.payments.watchPolygon();
  t.same(
    (await status(invoice.token)).body.invoice.transfers.map((x: any) => x.role),
    ['payment', 'duplicate', 'duplicate'],
  );
  t.equal(await creditsOf(app, key), before + 10_000, 'applied once');
});

t.test('the RPC down: status answers 503 unavailable and nothing is applied; back up, it applies', async (t) => {
  const invoice = await invoiceFor(1);
  const before = await creditsOf(app, key);
  chain.setProxyDown(true);
  const down = await status(invoice.token);
  t.equal(down.status, 503);
  t.equal(down.body.code, 'unavailable');
  await chain.transfer(invoice.invoice.address, units(1));
  await chain.mine(128);
  t.equal((await status(invoice.token)).status, 503);
  const watched = await app.app.services.payments.watchPolygon();
  t.ok(watched.failed > 0 && watched.checked === 0, 'the watcher could check nothing');
  const creating = await app.api('POST', '/api/v1/agent/payment', {
    key,
    body: { kind: 'mail_credits', method: 'polygon', amountCents: 100 },
    headers: { 'idempotency-key': 'while-down' },
  });
  t.equal(creating.status, 503, 'no invoice without the chain height');
  t.equal(await creditsOf(app, key), before, 'nothing applied');
  chain.setProxyDown(false);
  t.equal((await status(invoice.token)).body.status, 'applied');
  t.equal(await creditsOf(app, key), before + 10_000);
});

t.test('20 racing status calls for one paid invoice apply it once', async (t) => {
  const invoice = await invoiceFor(2);
  const before = await creditsOf(app, key);
  await chain.transfer(invoice.invoice.address, units(2));
  await chain.mine(128);
  const results = await Promise.all([...Array.from({ length: 20 }, () => status(invoice.token)), app.app.services.payments.watchPolygon()]);
  t.ok(results.slice(0, 20).every((r: any) => r.status === 200 && r.body.status === 'applied'));
  t.equal(await creditsOf(app, key), before + 20_000);
});

t.test('confirmed crypto hosting activates without human checkout (contract), by the watcher', async (t) => {
  const response = await app.api('POST', '/api/v1/agent/payment', {
    key,
    body: { kind: 'domain_hosting', method: 'polygon', periods: 1 },
    headers: { 'idempotency-key': 'hosting-1' },
  });
  t.match(response.body, { kind: 'domain_hosting', periods: 1, amountCents: 100, invoice: { amount: '1000000' } });
  t.equal(await app.app.services.hosting.isActive(agent.userId), false);
  await chain.transfer(response.body.invoice.address, units(1));
  await chain.mine(128);
  await app.app.services.payments.watchPolygon();
  t.equal((await status(response.body.token)).body.status, 'applied');
  t.equal(await app.app.services.hosting.isActive(agent.userId), true);
  t.same(
    (await app.app.store.hosting.events(agent.userId)).map((event) => [event.source, event.days, event.reference]),
    [['payment', 30, response.body.token]],
  );
});

t.test('underpayment and payment after expiry: recorded and shown, never applied; the expired token stays refused', async (t) => {
  const short = await invoiceFor(2);
  const late = await invoiceFor(1);
  const unpaid = await invoiceFor(1);
  const before = await creditsOf(app, key);
  await chain.transfer(short.invoice.address, units(1));
  await chain.mine(128);
  t.match((await status(short.token)).body, { status: 'pending', invoice: { paid: '1000000' } }, 'half paid, still open before its expiry');
  await chain.increaseTime(2 * 60 * 60);
  // Past 1,000 blocks since the late invoice was made: its first look reads two log ranges.
  await chain.mine(1000);
  await chain.transfer(late.invoice.address, units(1));
  await chain.mine(128);
  await app.app.services.payments.watchPolygon();
  const shortShown = (await status(short.token)).body;
  t.match(shortShown, { status: 'underpaid', invoice: { paid: '1000000', transfers: [{ role: 'payment', amount: '1000000' }] } });
  const lateShown = (await status(late.token)).body;
  t.match(lateShown, { status: 'expired', invoice: { paid: '0', transfers: [{ role: 'late', amount: '1000000' }] } });
  t.equal((await status(unpaid.token)).body.status, 'expired');
  // Topping up now, or paying again, changes nothing: the token is refused for good.
  await chain.transfer(short.invoice.address, units(1));
  await chain.transfer(late.invoice.address, units(1));
  await chain.mine(128);
  await app.app.services.payments.watchPolygon();
  t.equal((await status(short.token)).body.status, 'underpaid');
  t.same(
    (await status(late.token)).body.invoice.transfers.map((x: any) => x.role),
    ['late', 'late'],
  );
  t.equal(await creditsOf(app, key), before, 'nothing applied');
  const listed = (await app.api('GET', '/api/v1/agent/payments', { key })).body.payments;
  t.equal(new Set(listed.map((p: any) => p.invoice.address)).size, listed.length, 'no address was given twice');
});
