import type { AuthenticationVerdict } from './authentication.js';

/**
 * The junk filter's verdict on a received message (src/services/junk/filter.ts), stored with
 * it and shown by REST, MCP and the console. Points add up; at `threshold` or more the
 * message is junk and is filed in the Junk folder instead of INBOX.
 */
export type JunkRule = 'statistics' | 'correspondent' | 'sender-history' | 'authentication' | 'blocklist';

export interface JunkReason {
  rule: JunkRule;
  /** Positive counts toward junk, negative away from it. */
  points: number;
  /** One sentence for people and agents. */
  detail: string;
}

export interface JunkVerdict {
  junk: boolean;
  score: number;
  threshold: number;
  reasons: JunkReason[];
  /**
   * Set when the filter failed or ran out of time: the message went to INBOX unjudged
   * (`junk` false, no reasons) and this says why.
   */
  failed?: string;
}

/** The junk filter's settings (config `junk.*`, docs/operators/junk.md). */
export interface JunkSettings {
  enabled: boolean;
  /** Points at which a message is junk. */
  threshold: number;
  /** Judgments of each kind (junk, not junk) a model needs before its statistics count. */
  minJudgments: number;
  /** The filter's time budget per message: blocklist lookups still unanswered then fail it. */
  timeoutMs: number;
  blocklists: string[];
  /** Points per blocklist that lists the client. */
  blocklistPoints: number;
  /** Mailboxes (the operator's own) whose judgments also train the server-wide model. */
  serverModelTrainers: string[];
  /** Memory for models held for verdicts (src/services/junk/models.ts). */
  cacheMegabytes: number;
}

/** A mailbox's own judgment of a message, as the IMAP keywords record it; null when none. */
export type JunkJudgment = 'junk' | 'notJunk' | null;

/**
 * The keywords mail clients set for a judgment (RFC 5788's registry: $Junk, $NotJunk;
 * Thunderbird's older Junk and NonJunk), compared without case.
 */
const JUNK_KEYWORDS = new Set(['$junk', 'junk']);
const NOT_JUNK_KEYWORDS = new Set(['$notjunk', 'notjunk', 'nonjunk']);

export const JUNK_KEYWORD = '$Junk';
export const NOT_JUNK_KEYWORD = '$NotJunk';

export const isJunkKeyword = (keyword: string): boolean => JUNK_KEYWORDS.has(keyword.toLowerCase());
export const isNotJunkKeyword = (keyword: string): boolean => NOT_JUNK_KEYWORDS.has(keyword.toLowerCase());

/** Both kinds of keyword, or neither: no judgment. */
export const judgmentOf = (keywords: readonly string[]): JunkJudgment => {
  const junk = keywords.some(isJunkKeyword);
  const notJunk = keywords.some(isNotJunkKeyword);
  if (junk === notJunk) return null;
  return junk ? 'junk' : 'notJunk';
};

/** The keywords with one judgment's keyword and none of the other kind (or neither, for null). */
export const withJudgment = (keywords: readonly string[], judgment: JunkJudgment): string[] => {
  const kept = keywords.filter((keyword) => !isJunkKeyword(keyword) && !isNotJunkKeyword(keyword));
  if (judgment === 'junk') kept.push(JUNK_KEYWORD);
  if (judgment === 'notJunk') kept.push(NOT_JUNK_KEYWORD);
  return kept;
};

/** Whether a message counts as junk now: the mailbox's judgment when it made one, else the filter's verdict. */
export const isJunkNow = (keywords: readonly string[], verdict: JunkVerdict | null): boolean => {
  const judgment = judgmentOf(keywords);
  return judgment === null ? (verdict?.junk ?? false) : judgment === 'junk';
};

/** What the blocklists said of a client address; `unanswered` names zones whose lookup failed. */
export interface BlocklistAnswer {
  listed: string[];
  unanswered: string[];
}

/** What the filter knows of a received message besides the mailbox it is for. */
export interface JunkEvidence {
  /** src/mime/junk-tokens.ts; absent when the parse made none. */
  features: Int32Array | undefined;
  /** The From address, lowercased. */
  from: string | null;
  /** Absent when the checks are off (`smtp.authenticationChecks`). */
  authentication: AuthenticationVerdict | undefined;
  /** Null when the lookups ran out of the filter's time. */
  blocklists: BlocklistAnswer | null;
}
