import type { AddressResolver } from '../core/address-resolver.js';
import type { Clock } from '../core/clock.js';
import type { DnsResolver } from '../core/dns.js';
import type { Logger } from '../core/logger.js';
import type { MxResolver } from '../core/outbound.js';
import type { Argon2Binding } from '../core/passwords.js';
import type { AuthWorkerFactory } from '../workers/auth-client.js';
import type { ParseWorkerFactory } from '../workers/parse-pool.js';
import type { SearchWorkerFactory } from '../workers/search-writer.js';

/** What the caller of createApp (bin/, tests, benches) provides besides the config. */
export interface AppOptions {
  clock?: Clock;
  logger?: Logger;
  /** better-sqlite3's addon, when the single executable loaded it from its assets. */
  nativeBinding?: object;
  /** In the single executable: the addon file behind `nativeBinding`, which the search worker loads too. */
  nativeBindingFile?: string;
  /** @node-rs/argon2's exports, when the single executable loaded its addon from an asset. */
  argon2?: Argon2Binding;
  /**
   * Every DNS lookup; default: node:dns `Resolver` asking `dns.servers`. Tests point
   * `dns.servers` at a DNS server on loopback, or pass a fake here.
   */
  dns?: DnsResolver;
  /** DNS for direct MX delivery only, over `dns` (tests of delivery answer MX with a fake). */
  resolver?: MxResolver;
  /** DNS for webhook target checks only, over `dns` (docs/design.md, "How it is tested"). */
  addressResolver?: AddressResolver;
  /**
   * Starts the parse workers (src/workers/parse-pool.ts). bin/main.ts and the test
   * helpers pass sourceParseWorker, the executable an eval'd asset; without one (only some
   * benches), mail is parsed on the main thread with no time budget.
   */
  parseWorker?: ParseWorkerFactory;
  /** Starts the search worker, the full-text index's writer; without one, the index is written on the main thread. */
  searchWorker?: SearchWorkerFactory;
  /** Starts the authentication worker; without one, or with `dns` injected, inbound mail is judged on the main thread. */
  authWorker?: AuthWorkerFactory;
  /**
   * Hands back the native memory a burst left resident (src/runtime/native-memory.ts: the C
   * heap's free pages, the executable's own file pages), when the single executable has
   * native/heap-trim.c; called once quiet, after the full GC, and when an idle thread ends.
   */
  releaseNativeMemory?: () => void;
  /** How often the `tls.*` files are looked at for a renewed certificate. Default 5 s. */
  tlsPollMs?: number;
  /** acme-client's pause between looks at a pending ACME order (default 5 s); tests shorten it. */
  acmePollMs?: number;
  /** MTA-STS policies on a port other than 443 (RFC 8461 fixes 443; tests serve their own). */
  mtaStsPort?: number;
  /** Messages between a folder's rank samples (src/store/rank-samples.ts). */
  rankSampleSpacing?: number;
}
