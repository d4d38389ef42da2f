import { type Frame, GARBAGE_COLLECTOR, IDLE, PROGRAM, type ThreadProfile, timeByCategory, topSelfTime, type Window } from './cpu-profile.js';

/**
 * Which step of sending a sample of the server's main thread belongs to, read from the source
 * files (and a few function names) on its stack. The innermost frame that a rule names decides:
 * a store query belongs to whoever called it (the accept transaction, the delivery worker's
 * claim, a limit check), a socket write to the HTTP server or the SMTP client above it.
 * docs/contributing/benchmarks.md ("Benchmark: sending") lists the rules in words; keep both
 * in step when the send path moves.
 */

/** The request's steps are divided by accepted sends, the delivery's by delivered recipients, the rest by sends. */
export type Side = 'request' | 'delivery' | 'shared';

export interface Step {
  side: Side;
  name: string;
}

const step = (side: Side, name: string): Step => ({ side, name });

export const STEPS = {
  http: step('request', 'HTTP: server, routing, body, response'),
  mcp: step('request', 'MCP: SDK server and transport per call'),
  auth: step('request', 'auth: API key'),
  checks: step('request', 'checks: input, addresses, limits, credits'),
  compose: step('request', 'compose: MIME (nodemailer)'),
  accept: step('request', 'accept: submission, recipients, idempotency'),
  sentCopy: step('request', 'Sent copy: message, thread, body queued'),
  claim: step('delivery', 'claim: due rows, batches, claims'),
  prepare: step('delivery', 'prepare: submission, raw, DKIM, bounce address'),
  dataMark: step('delivery', 'DATA mark'),
  smtp: step('delivery', 'SMTP client: connect or reuse, envelope, DATA'),
  outcome: step('delivery', 'outcome: state, event, claim released'),
  worker: step('delivery', 'worker: lanes, other'),
  commit: step('shared', 'group commit: transaction and fsync call'),
  afterCommit: step('shared', 'after commit: feed, webhook log, queue kicks'),
  housekeeping: step('shared', "housekeeping: calendar, other processes' commits"),
  store: step('shared', 'store: other'),
  gc: step('shared', 'garbage collection (main thread)'),
  unattributed: step('shared', 'no caller on the stack (streams, timers, native)'),
} as const satisfies Record<string, Step>;

/** The main thread waiting for work: not CPU, left out of every figure. */
export const IDLE_STEP = step('shared', 'idle');

interface Rule {
  step: Step;
  file: RegExp;
  /** Only frames of these functions in `file` (a class method's name; arrow functions are often anonymous). */
  functionName?: RegExp;
}

const DELIVERY_SERVICE = /^src\/services\/delivery\/delivery\.ts$/;
const DELIVERY_REPO = /^src\/store\/delivery\.ts$/;

/** Checked in order at each frame; within a frame the first rule that matches wins. */
const RULES: readonly Rule[] = [
  // Delivery (src/services/delivery/delivery.ts): named methods say which step a store call serves.
  { step: STEPS.dataMark, file: DELIVERY_SERVICE, functionName: /^markDataSent$/ },
  { step: STEPS.dataMark, file: DELIVERY_REPO, functionName: /^markDataSent$/ },
  { step: STEPS.outcome, file: DELIVERY_SERVICE, functionName: /^(apply|settle|fail)$/ },
  { step: STEPS.outcome, file: DELIVERY_REPO, functionName: /^release$/ },
  { step: STEPS.claim, file: DELIVERY_SERVICE, functionName: /^(runOnce|batchesOf|claim|takeOverClaims|nextDueAt)$/ },
  { step: STEPS.claim, file: DELIVERY_REPO },
  { step: STEPS.prepare, file: DELIVERY_SERVICE, functionName: /^attempt$/ },
  {
    step: STEPS.prepare,
    file: /^src\/(services\/delivery\/(next-hop|dkim|bounces|mta-sts|mta-sts-policy)\.ts|core\/bounce-token\.ts|smtp\/outbound-message\.ts)$/,
  },
  { step: STEPS.outcome, file: /^src\/services\/delivery\/reputation\.ts$/ },
  { step: STEPS.claim, file: /^src\/(services\/cluster\/|runtime\/queues\/delivery\.ts|runtime\/lease-keeper\.ts)/ },
  {
    step: STEPS.smtp,
    file: /^(src\/smtp\/(outbound|outbound-pool|mta-sts-session)\.ts|src\/mime\/nodemailer\.ts|node_modules\/nodemailer\/dist\/esm\/smtp-connection\/)/,
  },
  { step: STEPS.worker, file: /^src\/services\/delivery\// },
  // The request: the route, its checks, the MIME, the accept transaction.
  { step: STEPS.auth, file: /^src\/(services\/access\/auth\.ts|http\/auth\.ts|core\/(bearer|keys)\.ts|services\/keys\/access-keys\.ts)$/ },
  {
    step: STEPS.checks,
    file: /^(src\/(core\/(validate|addresses|idempotency-key)\.ts|services\/access\/rate-limiter\.ts|services\/keys\/access-key-send-policy\.ts|services\/sending\/(send-input|send-limits|suppressions|local-delivery|sandbox)\.ts))/,
  },
  // nodemailer's address parser and shared helpers serve the checks and the SMTP client too: their caller decides.
  {
    step: STEPS.compose,
    file: /^(src\/services\/sending\/compose\.ts|node_modules\/nodemailer\/dist\/esm\/(mailer|mail-composer|mime-node|mime-funcs|stream-transport|qp|base64)\/)/,
  },
  { step: STEPS.sentCopy, file: /^src\/(services\/mail\/|mime\/|workers\/|runtime\/queues\/(bodies|search-index)\.ts)/ },
  { step: STEPS.accept, file: /^src\/services\/sending\// },
  { step: STEPS.mcp, file: /^(src\/mcp\/|node_modules\/(@modelcontextprotocol|@hono|zod|zod-to-json-schema)\/)/ },
  {
    step: STEPS.http,
    file: /^(src\/(http|console)\/|node:_http_|node_modules\/(koa|@koa|koa-compose|delegates|accepts|content-type|content-disposition|cookies|http-assert|http-errors|mime-types|mime-db|negotiator|on-finished|parseurl|path-to-regexp|statuses|type-is|vary|ee-first|encodeurl|escape-html|fresh|only)\/)/,
  },
  // Shared by both sides: one transaction commits sends and delivery outcomes together.
  { step: STEPS.commit, file: /^src\/store\/group-commit\.ts$/ },
  { step: STEPS.housekeeping, file: /^src\/(runtime\/(calendar|cron)\.ts|services\/calendar\/|app\/(foreign-commits|calendar-jobs)\.ts)/ },
  {
    step: STEPS.afterCommit,
    file: /^src\/(store\/commit-feed\.ts|app\/reactions\.ts|services\/(webhooks|events|health)\/|runtime\/(queue-runner|memory-release)\.ts|runtime\/queues\/webhooks\.ts)/,
  },
];

const matches = (rule: Rule, frame: Frame): boolean => rule.file.test(frame.file) && (rule.functionName?.test(frame.functionName) ?? true);

/** The step a stack (leaf first) belongs to. */
export const stepOf = (stack: readonly Frame[]): Step => {
  const leaf = stack[0]?.functionName;
  if (leaf === IDLE) return IDLE_STEP;
  if (leaf === GARBAGE_COLLECTOR) return STEPS.gc;
  if (leaf === PROGRAM) return STEPS.unattributed;
  for (const frame of stack) {
    const rule = RULES.find((candidate) => matches(candidate, frame));
    if (rule) return rule.step;
  }
  return stack.some((frame) => frame.file.startsWith('src/store/')) ? STEPS.store : STEPS.unattributed;
};

/**
 * What a profile says of a measured stretch. Its shares are sound where its absolute times are
 * not (bench/cpu-profile.ts), and the profiler costs the server CPU of its own, so bench:send
 * takes the CPU from a run without it and divides that by these shares.
 */
export interface ProfileSplit {
  /** Each step's share of the main thread's busy samples; they add up to 1. */
  shares: Map<Step, number>;
  /** Of the main thread's busy samples, how many of the bench's busiest functions (self time) took, as shares. */
  top: { frame: string; share: number }[];
  /** What the main thread's profile counted busy, ms (wall time: more than its CPU when it waited for a core). */
  busyMs: number;
  /** Busy time per worker thread by its profile, ms (wall time, as above). */
  workers: { role: string; busyMs: number }[];
}

/** A worker thread's role by the thread file it runs (src/workers/<role>-worker.ts); tsx's loader threads run none. */
const roleOf = (profile: ThreadProfile): string => {
  for (const { stack } of profile.samples) {
    for (const frame of stack) {
      const match = /^src\/workers\/(\w+)-worker\.ts$/.exec(frame.file);
      if (match) return match[1];
    }
  }
  return 'other';
};

/** Busy steps (idle left out), µs. */
const busySteps = (profile: ThreadProfile, window: Window): Map<Step, number> => {
  const steps = timeByCategory(profile, window, stepOf);
  steps.delete(IDLE_STEP);
  return steps;
};

const sum = (values: Iterable<number>): number => [...values].reduce((total, value) => total + value, 0);

/** The profiles of one server (main thread first) over `window`; `top` of its busiest functions. */
export const splitProfile = (profiles: readonly ThreadProfile[], window: Window, top: number): ProfileSplit => {
  const [main, ...workers] = profiles;
  if (main?.threadId !== 0) throw new Error('no profile of the main thread');
  const steps = busySteps(main, window);
  const busyUs = sum(steps.values());
  const share = (us: number) => (busyUs > 0 ? us / busyUs : 0);
  return {
    shares: new Map([...steps].map(([step, us]) => [step, share(us)])),
    top: topSelfTime(main, window, top).map(({ frame, us }) => ({ frame, share: share(us) })),
    busyMs: busyUs / 1000,
    workers: workers.map((profile) => ({ role: roleOf(profile), busyMs: sum(busySteps(profile, window).values()) / 1000 })),
  };
};
