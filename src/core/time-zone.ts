/** Day boundaries in the service time zone (config `timeZone`, an IANA name). */

const formatters = new Map<string, Intl.DateTimeFormat>();

const formatterFor = (timeZone: string): Intl.DateTimeFormat => {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
};

/**
 * The wall-clock fields of `at` in `timeZone`, read as if they were UTC. UTC (the default)
 * needs no time zone database: Intl's loads several MB of ICU data into memory.
 */
const wallClockAsUtc = (timeZone: string, at: number): number => {
  if (timeZone === 'UTC') return Math.floor(at / 1000) * 1000;
  const parts = Object.fromEntries(
    formatterFor(timeZone)
      .formatToParts(new Date(at))
      .map((p) => [p.type, p.value]),
  );
  return Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day), Number(parts.hour), Number(parts.minute), Number(parts.second));
};

/** Offset of `timeZone` from UTC at the instant `at`, in ms (positive east of Greenwich). */
const offsetAt = (timeZone: string, at: number): number => wallClockAsUtc(timeZone, Math.floor(at / 1000) * 1000) - Math.floor(at / 1000) * 1000;

/**
 * The instant the local day containing `at` began (config `timeZone`: daily limits reset at
 * midnight in the service time zone). The offset is taken at midnight itself, so a day that
 * starts or ends on a daylight-saving change is still cut at local midnight.
 */
export const startOfDay = (timeZone: string, at: number): number => {
  const local = wallClockAsUtc(timeZone, at);
  const localMidnight = local - (((local % 86_400_000) + 86_400_000) % 86_400_000);
  let guess = localMidnight - offsetAt(timeZone, at);
  guess = localMidnight - offsetAt(timeZone, guess);
  // Where midnight itself is skipped by a clock change, the day starts at the first instant after it.
  return guess > at ? localMidnight - offsetAt(timeZone, at) : guess;
};
