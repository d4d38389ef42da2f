import cron from 'node-cron';

type Fields = ReturnType<typeof cron.parse>;
type Matcher = ReturnType<typeof cron.createTask>;

/** Four years of minutes at most: every valid expression matches within them (29 February). */
const MAX_STEPS = 4 * 366 * 24 * 60;

/**
 * The first time after `after` (whole seconds, local time) that a node-cron expression (seconds
 * first; five fields mean second 0) matches, by the same rules node-cron's own matcher uses:
 * every field must match, day of month and day of week together. Days are matched by node-cron
 * itself (it knows `L`, `W` and `#`); a task that is never started only matches.
 */
export const nextCronTime = (expression: string, after: Date): Date => {
  const fields = cron.parse(expression);
  const matcher = cron.createTask(expression, () => undefined);
  const at = new Date(Math.floor(after.getTime() / 1000) * 1000 + 1000);
  for (let step = 0; step < MAX_STEPS; step += 1) {
    if (!dayMatches(fields, matcher, at)) {
      at.setHours(24, 0, 0, 0);
      continue;
    }
    if (!fields.hour.includes(at.getHours())) {
      at.setHours(at.getHours() + 1, 0, 0, 0);
      continue;
    }
    if (!fields.minute.includes(at.getMinutes())) {
      at.setMinutes(at.getMinutes() + 1, 0, 0);
      continue;
    }
    const second = fields.second.find((value) => value >= at.getSeconds());
    if (second !== undefined) {
      at.setSeconds(second, 0);
      return at;
    }
    at.setMinutes(at.getMinutes() + 1, 0, 0);
  }
  throw new Error(`the cron expression "${expression}" never matches`);
};

/** The day of `at` matches when the day's first matching second does (numeric time fields are first in order). */
const dayMatches = (fields: Fields, matcher: Matcher, at: Date): boolean =>
  matcher.match(new Date(at.getFullYear(), at.getMonth(), at.getDate(), fields.hour[0], fields.minute[0], fields.second[0]));
