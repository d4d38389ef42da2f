import type { ParsedMessage } from '../core/parsed-message.js';
import type { BodyPart } from '../core/stored-message.js';
import { leafParts } from './attachments.js';
import type { HeaderField } from './mime-tree.js';

/**
 * The features the junk filter counts (src/services/junk/): each a short string, kept only as
 * a 32-bit hash, so the model's tables hold numbers and no words of anyone's mail. A message
 * is the set of its features (presence, not counts), as SpamBayes, bogofilter and mox count them:
 *
 * - body words (lowercased, outer punctuation cut, 3 to 12 characters as SpamBayes found best;
 *   a longer one becomes its first letter and length class), a word written in capitals once
 *   more as such, and each pair of neighbouring words, as mox's two-grams;
 * - the host of every link in the text and the HTML, and its last two labels;
 * - Subject words, From/Reply-To/Sender addresses, domains and display-name words, the To and
 *   Cc domains and count, the Message-ID domain, the mailer, the top content type and charset,
 *   the names of the header fields present, the HTML tags that matter, the attachment types;
 * - the hosts and /24 networks the Received fields name.
 *
 * Verdict fields (Authentication-Results, ARC, X-Spam-*) and the fields a delivery adds
 * (Return-Path, Delivered-To) are left out; so are the trace fields this service puts on
 * top of each copy it stores (./own-trace.ts), so a stored message read again for a
 * training has the features it had when it arrived.
 */

/** Features of one message at most: a long mailing-list digest needs no more to be judged. */
const MAX_FEATURES = 3000;
/** The text read for words; the start of a message is where spam puts its pitch. */
const MAX_TEXT_CHARS = 64 * 1024;
const MAX_HTML_CHARS = 256 * 1024;
const MIN_WORD = 3;
const MAX_WORD = 12;

/**
 * Header fields that say how the message was handled on its way, or by whom, not what it is.
 * Received fields count (their hosts), except the ones this service adds: a training strips
 * those from the stored copy first (./own-trace.ts).
 */
const TRACE_FIELD =
  /^(authentication-results|arc-.*|return-path|delivered-to|x-original-to|envelope-to|x-spam.*|x-virus.*|status|x-status|x-uid|x-keywords|content-length|lines)$/;

/** HTML tags whose presence tells something about a message. */
const TELLING_TAGS = new Set(['img', 'font', 'table', 'form', 'input', 'script', 'iframe', 'center', 'style', 'map', 'area', 'object', 'embed', 'base']);

const RECEIVED_HOST = /\b(?:from|by)\s+([a-z0-9.-]{1,253})/g;
const RECEIVED_IPV4 = /\[(\d{1,3}\.\d{1,3}\.\d{1,3})\.\d{1,3}\]/g;
const URL = /\b(?:https?:\/\/|www\.)([a-z0-9.-]{1,253})/gi;
const TAG = /<([a-z][a-z0-9]{0,9})\b/gi;

const FNV_OFFSET = 0x811c9dc5;

/** FNV-1a continued over `text`'s UTF-16 code units from `hash`, the state after the text before it. */
const hashOn = (hash: number, text: string): number => {
  let state = hash;
  for (let i = 0; i < text.length; i++) state = Math.imul(state ^ text.charCodeAt(i), 0x01000193);
  return state;
};

/** FNV-1a over UTF-16 code units, as a signed 32-bit integer (what SQLite stores in 4 bytes). */
export const featureHash = (text: string): number => hashOn(FNV_OFFSET, text) | 0;

class Features {
  readonly hashes = new Set<number>();
  add(feature: string): void {
    this.addHash(featureHash(feature));
  }
  /** A feature already hashed (hashOn), for the words, whose strings are never built. */
  addHash(hash: number): void {
    if (this.hashes.size < MAX_FEATURES) this.hashes.add(hash | 0);
  }
}

/** The features of a parsed message: `headers` are its top-level fields, `root` its structure. */
export const junkFeatures = (headers: readonly HeaderField[], root: BodyPart, parsed: Omit<ParsedMessage, 'junkFeatures'>): Int32Array => {
  const features = new Features();
  headerFeatures(features, headers, parsed);
  structureFeatures(features, root, parsed.html !== null);
  wordFeatures(features, parsed.subject, 's:');
  wordFeatures(features, (parsed.text ?? '').slice(0, MAX_TEXT_CHARS), '');
  if (parsed.html !== null) htmlFeatures(features, parsed.html.slice(0, MAX_HTML_CHARS));
  return Int32Array.from(features.hashes);
};

const headerFeatures = (features: Features, headers: readonly HeaderField[], parsed: Omit<ParsedMessage, 'junkFeatures'>): void => {
  for (const field of headers) {
    if (TRACE_FIELD.test(field.name)) continue;
    features.add(`h:${field.name}`);
    if (field.name === 'received') receivedFeatures(features, field.value.toLowerCase());
    else if (field.name === 'x-mailer' || field.name === 'user-agent') features.add(`mailer:${field.value.toLowerCase().split(/\s+/).slice(0, 2).join(' ')}`);
    else if (field.name === 'message-id') features.add(`mid:${domainOf(field.value.replace(/[<>\s]/g, ''))}`);
    else if (field.name === 'reply-to' || field.name === 'sender') addressFeatures(features, field.name, field.value.toLowerCase());
    else if (field.name === 'precedence' || field.name === 'list-id') features.add(`${field.name}:${field.value.toLowerCase().slice(0, 100)}`);
  }
  if (parsed.from) {
    const email = parsed.from.email.toLowerCase();
    addressFeatures(features, 'from', email);
    for (const word of (parsed.from.name ?? '').toLowerCase().split(/\s+/)) if (word.length >= 2) features.add(`from:name:${word}`);
  } else features.add('from:none');
  const recipients = [...parsed.to, ...parsed.cc];
  features.add(`rcpt:${Math.min(recipients.length, 10)}`);
  for (const entry of recipients.slice(0, 20)) features.add(`rcpt:${domainOf(entry.email.toLowerCase())}`);
};

/** The hosts a Received field names (RFC 5321 section 4.4 `from` and `by`) and the /24 of its addresses. */
const receivedFeatures = (features: Features, value: string): void => {
  for (const match of value.matchAll(RECEIVED_HOST)) {
    features.add(`rcvd:${match[1]}`);
    features.add(`rcvd:${lastLabels(match[1])}`);
  }
  for (const match of value.matchAll(RECEIVED_IPV4)) features.add(`rcvd:ip:${match[1]}`);
};

const addressFeatures = (features: Features, field: string, address: string): void => {
  const email = (/[^\s<>"]+@[^\s<>"]+/.exec(address)?.[0] ?? address).slice(0, 200);
  features.add(`${field}:${email}`);
  features.add(`${field}:@${domainOf(email)}`);
};

/** A host's last two labels: its registered domain, most of the time. */
const lastLabels = (host: string): string => host.split('.').slice(-2).join('.');

const domainOf = (address: string): string => address.slice(address.lastIndexOf('@') + 1).slice(0, 200);

const structureFeatures = (features: Features, root: BodyPart, hasHtml: boolean): void => {
  features.add(`ct:${root.type}/${root.subtype}`);
  const charset = root.params.find(([name]) => name === 'charset')?.[1].toLowerCase();
  if (charset) features.add(`charset:${charset}`);
  const leaves = leafParts(root);
  const texts = leaves.filter((leaf) => leaf.contentType === 'text/plain' && leaf.disposition === 'inline');
  if (hasHtml && texts.length === 0) features.add('html:only');
  for (const leaf of leaves) {
    if (leaf.contentType !== 'text/plain' && leaf.contentType !== 'text/html') features.add(`part:${leaf.contentType}`);
    features.add(`cte:${leaf.part.encoding}`);
  }
};

const htmlFeatures = (features: Features, html: string): void => {
  for (const match of html.matchAll(TAG)) {
    const tag = match[1].toLowerCase();
    if (TELLING_TAGS.has(tag)) features.add(`tag:${tag}`);
  }
  urlFeatures(features, html);
};

const urlFeatures = (features: Features, text: string): void => {
  for (const match of text.matchAll(URL)) {
    const host = match[1].toLowerCase().replace(/\.+$/, '');
    features.add(`url:${host}`);
    features.add(`url:${lastLabels(host)}`);
  }
};

/** Characters cut from both ends of a word (quotes, brackets, sentence marks); `$` and `!` stay. */
const OUTER = /^[^\p{L}\p{N}$!]+|[^\p{L}\p{N}$!]+$/gu;

/** The spaces beyond ASCII that JavaScript's `\s` matches. */
const WIDE_SPACES = new Set([
  0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff,
]);

/** What JavaScript's `\s` matches, by code unit: the separators of words. */
const isSpace = (code: number): boolean => code === 32 || (code >= 9 && code <= 13) || (code > 127 && WIDE_SPACES.has(code));

/** An ASCII letter or digit, `$` or `!`: a word that starts and ends with one has nothing to cut. */
const isAsciiKept = (code: number): boolean =>
  (code >= 97 && code <= 122) || (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || code === 36 || code === 33;

/** A chunk lowercased, with its outer punctuation cut (OUTER); the regular expression only when an end needs it. */
const wordOf = (lower: string): string =>
  isAsciiKept(lower.charCodeAt(0)) && isAsciiKept(lower.charCodeAt(lower.length - 1)) ? lower : lower.replace(OUTER, '');

/**
 * Words of a text and pairs of neighbouring words, each under `prefix`; links as hosts. One
 * pass over the text: the features' strings (prefix, word, pair) are never built, their hashes
 * are continued from the hash of what comes before (hashOn), so a pair costs the hash of its
 * second word.
 */
const wordFeatures = (features: Features, text: string, prefix: string): void => {
  if (prefix === '') urlFeatures(features, text);
  const prefixState = hashOn(FNV_OFFSET, prefix);
  const shoutedState = hashOn(prefixState, 'CAPS:');
  /** The hash state of `prefix + previous word + ' '`, or null after a break. */
  let pairState: number | null = null;
  let index = 0;
  while (index < text.length) {
    while (index < text.length && isSpace(text.charCodeAt(index))) index++;
    const start = index;
    while (index < text.length && !isSpace(text.charCodeAt(index))) index++;
    if (index === start) break;
    pairState = wordFeature(features, text.slice(start, index), prefix, prefixState, shoutedState, pairState);
  }
};

/** The features of one chunk of text between spaces; returns the pair state for the next word. */
const wordFeature = (features: Features, chunk: string, prefix: string, prefixState: number, shoutedState: number, pairState: number | null): number | null => {
  if (chunk.length < MIN_WORD) return null;
  if (chunk.includes('://') || chunk.startsWith('www.')) return pairState;
  const lower = chunk.toLowerCase();
  const word = wordOf(lower);
  if (word.length < MIN_WORD) return null;
  if (word.length > MAX_WORD) {
    features.add(`${prefix}skip:${word[0]}${Math.floor(word.length / 10)}`);
    return null;
  }
  const wordState = hashOn(prefixState, word);
  features.addHash(wordState);
  if (lower !== chunk && isShouted(chunk)) features.addHash(hashOn(shoutedState, word));
  if (pairState !== null) features.addHash(hashOn(pairState, word));
  return hashOn(wordState, ' ');
};

const isShouted = (chunk: string): boolean => chunk.length >= 4 && chunk === chunk.toUpperCase();
