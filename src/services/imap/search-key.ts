import type { SystemFlag } from '../mail/message-ops.js';

/** RFC 3501 section 6.4.4 search keys (and RFC 7162's MODSEQ), with sequence sets already resolved to UIDs. */
export type SearchKey =
  | { kind: 'all' }
  | { kind: 'none' }
  | { kind: 'and'; keys: SearchKey[] }
  | { kind: 'or'; left: SearchKey; right: SearchKey }
  | { kind: 'not'; key: SearchKey }
  | { kind: 'uids'; uids: ReadonlySet<number> }
  | { kind: 'flag'; flag: SystemFlag; set: boolean }
  /** RECENT (this session's \Recent), NEW (recent and unseen), OLD (not recent). */
  | { kind: 'recent'; which: 'recent' | 'new' | 'old' }
  | { kind: 'keyword'; keyword: string; set: boolean }
  /** `field` lowercased; an empty `text` matches every message that has the field. */
  | { kind: 'header'; field: string; text: string }
  /** TEXT (header and body) or BODY: substrings of the decoded text. */
  | { kind: 'text'; scope: 'text' | 'body'; text: string }
  /** `day` is midnight UTC of the date given, in Unix milliseconds. */
  | { kind: 'date'; of: 'internal' | 'sent'; op: 'before' | 'on' | 'since'; day: number }
  | { kind: 'size'; op: 'larger' | 'smaller'; bytes: number }
  | { kind: 'modseq'; modseq: number };
