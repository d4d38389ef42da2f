import type { MessageStructure } from '../core/stored-message.js';
import { isAttachment, leafParts } from './attachments.js';

/** Attachment bodies at least this long are left out of what mailparser reads. */
const CUT_MIN_BYTES = 64 * 1024;
const BOUNDARY_AT_LINE_START = Buffer.from('\n--', 'latin1');

/**
 * The message as mailparser is given it: without the bodies of its large attachments.
 * mailparser's part of the parse is the header fields, the text and the HTML; the attachments
 * are listed from the structure by mailparser's own rule (./attachments.ts), so their bytes
 * change nothing it gives, while it decodes, collects and hashes each of them (for one of
 * 24 MB, about 140 MB of the parse worker's memory at once). A body with a line that starts
 * with "--" is kept: were that a boundary mailparser saw and the structure did not, leaving
 * it out could change the text.
 */
export const withoutLargeAttachmentBodies = (raw: Buffer, structure: MessageStructure): Buffer => {
  const cuts = leafParts(structure.root)
    .filter(isAttachment)
    .map(({ part }) => part)
    .filter((part) => part.end - part.bodyStart >= CUT_MIN_BYTES && !hasBoundaryLikeLine(raw.subarray(part.bodyStart, part.end)))
    .sort((a, b) => a.bodyStart - b.bodyStart);
  if (cuts.length === 0) return raw;
  const pieces: Buffer[] = [];
  let from = 0;
  for (const part of cuts) {
    pieces.push(raw.subarray(from, part.bodyStart));
    from = part.end;
  }
  pieces.push(raw.subarray(from));
  return Buffer.concat(pieces);
};

const hasBoundaryLikeLine = (body: Buffer): boolean => (body[0] === 0x2d && body[1] === 0x2d) || body.indexOf(BOUNDARY_AT_LINE_START) !== -1;
