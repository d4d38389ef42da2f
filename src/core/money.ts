/**
 * Prices (docs/agents/payments.md): $1 buys 10,000 mail credits; hosting is $1 per period of
 * 30 days, 1 to 12 periods. Integers only: cents, credits, days, token units (bigint).
 */
export const CREDITS_PER_DOLLAR = 10_000;
export const CENTS_PER_DOLLAR = 100;
export const CENTS_PER_PERIOD = 100;
export const DAYS_PER_PERIOD = 30;
export const MAX_PERIODS = 12;

/** 10,000 credits a dollar is 100 a cent: a whole number, so no division touches an amount. */
const CREDITS_PER_CENT = 100;

/** Credits bought with `cents` (whole dollars: the request schema refuses other amounts). */
export const creditsForCents = (cents: number): number => cents * CREDITS_PER_CENT;

/** Token units of `cents` for a dollar token with `decimals` decimals (USDC: 6, so 1 cent = 10,000 units). */
export const tokenUnitsForCents = (cents: number, decimals: number): bigint => BigInt(cents) * 10n ** BigInt(decimals - 2);

/** Sum of integer amounts held as decimal strings. */
export const sumUnits = (amounts: readonly string[]): bigint => amounts.reduce((total, amount) => total + BigInt(amount), 0n);
