import type { Config } from '../config/types.js';
import type { Logger } from '../core/logger.js';
import type { IndexWriter } from '../core/search-index.js';
import type { Store } from '../store/index.js';
import { InlineIndexWriter, SearchIndexFileWriter } from '../store/search-db.js';
import { AuthThread } from '../workers/threads/auth-thread-client.js';
import { IDLE_THREAD_MS as PARSE_IDLE_MS, ParsePool, type ParseWorkerFactory } from '../workers/threads/parse-pool.js';
import { IDLE_THREAD_MS as SEARCH_IDLE_MS, SearchWriterThread } from '../workers/threads/search-writer-thread.js';
import type { AppOptions } from './options.js';

/** The search thread when there is a way to start it; else the index's writer runs on the main thread. */
export const createIndexWriter = (store: Store, options: AppOptions, logger: Logger): IndexWriter =>
  options.searchWorker
    ? new SearchWriterThread(store.searchFile, options.searchWorker, logger, {
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
 * The authentication thread, when it is configured and can be started. Tests' fake resolvers
 * cannot cross into a thread: with one injected, the checks stay on the main thread. With the
 * checks off (smtp.authenticationChecks) there is nothing for a thread to do.
 */
export const createAuthThread = (config: Config, options: AppOptions, logger: Logger): AuthThread | null =>
  options.dns || !options.authWorker || !config.smtp.authenticationChecks || !config.smtp.authenticationThread
    ? null
    : new AuthThread(options.authWorker, { dns: config.dns, hostname: config.smtp.hostname, timeoutMs: config.smtp.authenticationTimeoutMs }, logger);
