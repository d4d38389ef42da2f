/**
 * The authentication worker's side of its watchdog (auth-client.ts): two cells of the
 * shared `state` (auth-protocol.ts) kept current. BEAT counts up every BEAT_MS while the event
 * loop turns. RUNNING names the check whose code runs: each check runs in its own async
 * context, and an async hook writes that context's id before every callback (a timer, an I/O
 * callback, a promise reaction), so when one check's synchronous work holds the thread,
 * RUNNING names that check and no other. Code outside any check writes 0.
 */
import { AsyncLocalStorage, createHook } from 'node:async_hooks';
import { BEAT, BEAT_MS, RUNNING } from './auth-protocol.js';

export interface RunningChecks {
  /** Runs `work` as check `id`: RUNNING is `id` whenever its code, or code it scheduled, runs. */
  run<T>(id: number, work: () => T): T;
}

export const trackRunningChecks = (state: Int32Array): RunningChecks => {
  const checking = new AsyncLocalStorage<number>();
  createHook({ before: () => Atomics.store(state, RUNNING, checking.getStore() ?? 0) }).enable();
  setInterval(() => Atomics.add(state, BEAT, 1), BEAT_MS).unref();
  return {
    run: (id, work) =>
      checking.run(id, () => {
        Atomics.store(state, RUNNING, id);
        return work();
      }),
  };
};
