import type { Config } from '../config/types.js';
import type { Logger } from '../core/logger.js';
import type { IndexWriter } from '../core/search-index.js';
import type { Store } from '../store/index.js';
import { InlineIndexWriter, SearchIndexFileWriter } from '../store/search-db.js';
import { AuthenticationWorker } from '../workers/auth-client.js';
import { IDLE_WORKER_MS as PARSE_IDLE_MS, ParsePool, type ParseWorkerFactory } from '../workers/parse-pool.js';
import { IDLE_WORKER_MS as SEARCH_IDLE_MS, SearchWriter } from '../workers/search-writer.js';
import type { AppOptions } from './options.js';

/** The search worker when there is a way to start it; else the index's writer runs on the main thread. */
export const createIndexWriter = (store: Store, options: AppOptions, logger: Logger): IndexWriter =>
  options.searchWorker
    ? new SearchWriter(store.searchFile, options.searchWorker, logger, {
        nativeBindingFile: options.nativeBindingFile,
        // An idle thread ends, and its arena's pages go back at once (see releaseNativeMemory).
        idleMs: SEARCH_IDLE_MS,
        onIdleExit: () => options.releaseNativeMemory?.(),
      })
    : new InlineIndexWriter(SearchIndexFileWriter.open(store.searchFile, { nativeBinding: options.nativeBinding }));

/** Null only when no way to start a thread was given (a bench that stores no received mail): then parses run inline. */
export const createParsePool = (config: Config, factory: ParseWorkerFactory | undefined, logger: Logger, onIdleExit: () => void): ParsePool | null => {
  if (!factory) {
    logger.warn('mail is parsed on the main thread, with no time budget: no parse-thread factory was given');
    return null;
  }
  return new ParsePool(config.smtp.parseThreads, factory, logger, { timeoutMs: config.smtp.parseTimeoutMs, idleMs: PARSE_IDLE_MS, onIdleExit });
};

/**
 * The authentication worker, when it is configured and can be started. Tests' fake resolvers
 * cannot cross into a thread: with one injected, the checks stay on the main thread. With the
 * checks off (smtp.authenticationChecks) there is nothing for a thread to do.
 */
export const createAuthWorker = (config: Config, options: AppOptions, logger: Logger): AuthenticationWorker | null =>
  options.dns || !options.authWorker || !config.smtp.authenticationChecks || !config.smtp.authenticationThread
    ? null
    : new AuthenticationWorker(options.authWorker, { dns: config.dns, hostname: config.smtp.hostname, timeoutMs: config.smtp.authenticationTimeoutMs }, logger);
