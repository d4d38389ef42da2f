/**
 * What threading reads of a message (RFC 5322 section 3.6.4): its own Message-ID and the
 * ids it names as its ancestors in In-Reply-To and References, and its subject reduced to
 * what replies keep of it. Pure functions over received (untrusted) header values: every
 * value is bounded before any pattern runs on it.
 */

/** A msg-id as the wire has it: `<id-left@id-right>`, no white space or angle brackets inside. */
const MSG_ID = /<[^<>\s]{1,250}>/g;
/** References of one message that threading reads: the first (the thread's root) and the last ones. */
export const MAX_REFERENCES = 40;
/** Header text read for ids; a References field longer than this is read from both ends. */
const MAX_HEADER_CHARS = 16 * 1024;

export interface ThreadKeys {
  /** The message's own Message-ID, or null. */
  own: string | null;
  /** The ids it replies to: In-Reply-To first, then References, each once, without `own`. */
  ancestors: string[];
}

/** The msg-ids in a header value, in order; ids are compared as written (RFC 5322 gives no folding of case). */
export const messageIdsIn = (value: string | null | undefined): string[] => {
  if (!value) return [];
  const text = value.length <= MAX_HEADER_CHARS ? value : `${value.slice(0, MAX_HEADER_CHARS / 2)} ${value.slice(-MAX_HEADER_CHARS / 2)}`;
  return text.match(MSG_ID) ?? [];
};

export const threadKeysOf = (message: { messageId: string | null; inReplyTo: string | null; references: readonly string[] }): ThreadKeys => {
  const own = messageIdsIn(message.messageId)[0] ?? null;
  const references = messageIdsIn(message.references.join(' '));
  // RFC 5322 section 3.6.4: the first reference is the thread's start, the last ones the nearest ancestors.
  const kept = references.length <= MAX_REFERENCES ? references : [references[0], ...references.slice(-(MAX_REFERENCES - 1))];
  const ancestors = [...new Set([...messageIdsIn(message.inReplyTo).slice(0, 5), ...kept])].filter((id) => id !== own);
  return { own, ancestors };
};

/**
 * Reply and forward prefixes, in the languages clients write them (Re, Fwd, Fw; AW, WG; SV,
 * VS; Antw, Doorst; Rif; TR; Odp; RES, ENC; Ynt; ΑΠ, ΣΧΕΤ; 回复, 转发; 答复), with an optional
 * count ("Re[2]:", "Re(2):") and a mailing-list tag before them ("[list] Re:").
 */
const PREFIX =
  /^\s{0,10}(?:\[[^\][]{1,40}\]\s{0,10})?(?:re|fwd?|aw|wg|sv|vs|antw|doorst|rif|tr|odp|res|enc|ynt|απ|σχετ|回复|回覆|转发|轉寄|答复)\s{0,3}(?:\[\d{1,4}\]|\(\d{1,4}\))?\s{0,3}[:：]/iu;
const LIST_TAG = /^\s{0,10}\[[^\][]{1,40}\]/u;
/** Subjects are cut here before they are compared. */
const MAX_SUBJECT_CHARS = 300;

/** True when the subject starts with a reply or forward prefix. */
export const hasReplyPrefix = (subject: string): boolean => PREFIX.test(subject.slice(0, MAX_SUBJECT_CHARS));

/**
 * The subject threads compare (JWZ's "subject without Re:"): reply and forward prefixes and
 * list tags removed, white space collapsed, case folded. Empty when nothing is left.
 */
export const subjectKey = (subject: string): string => {
  let rest = subject.slice(0, MAX_SUBJECT_CHARS);
  for (let round = 0; round < 10; round += 1) {
    const prefix = PREFIX.exec(rest) ?? LIST_TAG.exec(rest);
    if (!prefix) break;
    rest = rest.slice(prefix[0].length);
  }
  return rest.split(/\s+/).filter(Boolean).join(' ').toLowerCase();
};
