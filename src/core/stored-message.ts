/**
 * What ingest stores of a received message besides its raw bytes, so that neither a REST
 * or MCP read nor an IMAP FETCH ever parses received content on the main thread. It is
 * built once, in a parse worker (src/workers/parse-worker.ts, code in src/mime/),
 * under a time and size budget, and kept in `message_bodies` (src/store/message-bodies.ts).
 *
 * Offsets are byte offsets into the message's stored raw bytes (the ones IMAP BODY[]
 * returns, with our Received header in front), so any part can be served byte-exact
 * (RFC 3501 section 6.4.5) or decoded alone. Header-derived strings are the header's bytes
 * read as latin1 with folding removed: exactly what is on the wire, RFC 2047 words left
 * encoded, as ENVELOPE and BODYSTRUCTURE want them (RFC 3501 section 7.4.2). An IMAP
 * server sends a string with bytes outside printable ASCII as a literal of those bytes
 * (`Buffer.from(value, 'latin1')`).
 *
 * Received content is untrusted: every value here is data, bounded in size (see the
 * limits in src/mime/structure.ts), never rendered or used as a path.
 */

/** Bumped when the builder changes what it stores; a row of another version is rebuilt. */
export const STORED_BODY_VERSION = 3;

/**
 * One address of an ENVELOPE address list (RFC 3501 section 7.4.2: addr-name, addr-adl,
 * addr-mailbox, addr-host). Group syntax (RFC 5322 section 3.4) appears as RFC 3501 says:
 * a start marker with `mailbox` = the group name and `host` null, the members, then an end
 * marker with all four null.
 */
export interface EnvelopeAddress {
  name: string | null;
  /** The source route; always null (obsolete syntax, RFC 5322 section 4.4). */
  adl: null;
  mailbox: string | null;
  host: string | null;
}

/**
 * The ENVELOPE of a message (RFC 3501 section 7.4.2), in its order. A field whose header
 * is absent is null; an address list with no address in it is null. `sender` and
 * `replyTo` are already defaulted to `from` when their headers are absent, as the RFC
 * requires of the server, so an IMAP adapter serializes these fields as they are.
 */
export interface Envelope {
  date: string | null;
  subject: string | null;
  from: EnvelopeAddress[] | null;
  sender: EnvelopeAddress[] | null;
  replyTo: EnvelopeAddress[] | null;
  to: EnvelopeAddress[] | null;
  cc: EnvelopeAddress[] | null;
  bcc: EnvelopeAddress[] | null;
  inReplyTo: string | null;
  messageId: string | null;
}

/** A Content-Disposition (RFC 2183): the disposition type lowercased, and its parameters. */
export interface Disposition {
  type: string;
  params: [string, string][];
}

/**
 * One node of the MIME tree, with every field BODYSTRUCTURE needs (RFC 3501 section 7.4.2,
 * body-type-1part / body-type-mpart and their extension data) and where its bytes are.
 *
 * - The root is the message itself: `headerStart` 0, its header is the message's header.
 *   RFC 3501 numbers the parts below it: a multipart's children are 1, 2, ...; a message
 *   that is not multipart has one part, 1, which is the root's body (see `section`).
 * - A multipart's `children` are its body parts; a message/rfc822 part's one child is the
 *   root of the message it carries (whose own children are numbered under the rfc822
 *   part's number, RFC 3501 section 6.4.5).
 */
export interface BodyPart {
  /** The RFC 3501 section number of this part ("1", "2.1"); "" for the root. */
  section: string;
  /** Media type and subtype, lowercased (RFC 2045 section 5.1); text/plain when absent. */
  type: string;
  subtype: string;
  /** Content-Type parameters: names lowercased, values unquoted, as on the wire. */
  params: [string, string][];
  /** Content-ID, Content-Description, Content-MD5, Content-Location: as on the wire, or null. */
  id: string | null;
  description: string | null;
  md5: string | null;
  location: string | null;
  /** Content-Transfer-Encoding lowercased; "7bit" when absent (RFC 2045 section 6.1). */
  encoding: string;
  disposition: Disposition | null;
  /** Content-Language tags (RFC 3282), or null when absent. */
  language: string[] | null;
  /** Offsets: first header byte; first body byte (after the blank line); after the last body byte. */
  headerStart: number;
  bodyStart: number;
  end: number;
  /**
   * Body size in octets as IMAP sends it (body-fld-octets): the bytes from `bodyStart` to
   * `end` with every line end CRLF (src/mime/crlf.ts), which is `end - bodyStart` unless
   * the stored bytes have bare CR or LF.
   */
  size: number;
  /** Body size in lines of that CRLF form (body-fld-lines), for text/* and message/rfc822 parts; else null. */
  lines: number | null;
  /** message/rfc822 only: the ENVELOPE of the message it carries; else null. */
  envelope: Envelope | null;
  children: BodyPart[];
  /**
   * True when the structure budget (depth, number of parts) stopped the parse here: this
   * part's body was not looked into, so it is served as one opaque part.
   */
  truncated: boolean;
}

/** The message's MIME tree and its ENVELOPE: what IMAP FETCH answers BODYSTRUCTURE, BODY and ENVELOPE from. */
export interface MessageStructure {
  envelope: Envelope;
  root: BodyPart;
  /** The whole message's size as IMAP sends it, CRLF line ends (RFC822.SIZE). */
  size: number;
}

/**
 * An attachment of the read answer, located in the raw message: a read decodes only the
 * bytes from `bodyStart` to `end` with `encoding` (src/mime/transfer-encoding.ts).
 */
export interface StoredAttachment {
  /** Decoded (RFC 2231, RFC 2047) file name, or null. Never used as a path. */
  filename: string | null;
  contentType: string;
  /** Decoded size in bytes. */
  size: number;
  /** The part's RFC 3501 section number. */
  section: string;
  encoding: string;
  bodyStart: number;
  end: number;
}

/**
 * Why `text` (and `html`) came from the bounded fallback rather than the full parse:
 * - `timeout`: the parse ran over its time budget (`parse.timeoutMs`) and was cut off;
 * - `structure`: the message is over the structure budget (nesting depth, number of parts,
 *   header size), so the full parse was not tried;
 * - `error`: the full parse failed on the message.
 */
export type ContentFallback = 'timeout' | 'structure' | 'error';

/** What a REST or MCP read answers from, with the message row's own columns. */
export interface StoredContent {
  text: string;
  html: string | null;
  attachments: StoredAttachment[];
  /** The References header's message ids (RFC 5322 section 3.6.4). */
  references: string[];
  /** Null when the full parse produced `text` and `html`. */
  fallback: ContentFallback | null;
  /**
   * The new text: `text` without the quoted history and the signature (src/mime/extract-text.ts),
   * and likewise `html` (null when `html` is). Equal to `text` and `html` when the parse was cut
   * off (`fallback` is `timeout`) or the text is over the extraction's size bound.
   */
  extractedText: string;
  extractedHtml: string | null;
}

/** Everything ingest stores of a message besides its raw bytes and its list columns. */
export interface StoredBody {
  version: number;
  structure: MessageStructure;
  content: StoredContent;
  /**
   * ENVELOPE and BODYSTRUCTURE in IMAP's notation (src/mime/imap-notation.ts), as latin1
   * strings of the bytes a FETCH sends: an initial sync of thousands of messages sends them
   * from the rows without building them again.
   */
  wire: { envelope: string; bodyStructure: string };
  /** The content's texts as the store keeps them, packed by the builder (src/core/packed-text.ts). */
  packed: PackedTexts;
  /**
   * Where the raw body starts when the text is that body as it is (src/mime/plain-body.ts):
   * searches then read the raw bytes, not the packed text. Null for any other message.
   */
  plainTextStart: number | null;
}

/** A packed text: plain, or a raw DEFLATE of its UTF-8 (a Uint8Array once it crossed a thread). */
export type PackedText = string | Uint8Array;

export interface PackedTexts {
  text: PackedText;
  html: PackedText | null;
  /** Null when equal to the text without trailing white space. */
  extractedText: PackedText | null;
  /** Null when equal to the HTML. */
  extractedHtml: PackedText | null;
}

/**
 * The parts of a message written in pieces ahead of the commit that stores it, because they are
 * too large to copy in one synchronous step (src/store/large-values.ts): their value ids. The
 * commit names them instead of writing the bytes.
 */
export interface StagedValues {
  raw?: number;
  texts?: Partial<Record<keyof PackedTexts, number>>;
}
