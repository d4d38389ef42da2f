import { AppError } from '../core/errors.js';
import { headerEnd } from './mime-tree.js';

/**
 * The limits on a received message's header section (config `smtp.maxHeaderBytes` and
 * `smtp.maxHeaderLines`; docs/operators/inbound.md "Header limits"), both counted up to and
 * with the empty line that ends it: its bytes, and its lines, folded continuation lines
 * included. A message without an empty line is all header.
 */
export interface HeaderLimits {
  maxBytes: number;
  maxLines: number;
}

const LF = 0x0a;

/**
 * Refuses a message whose header section is over the limits (`too_large`: 552 5.3.4 in SMTP,
 * NO [LIMIT] in IMAP). Reads at most maxBytes + 1 bytes, once to find the end and once to
 * count the lines, stopping at the first line past the limit.
 */
export const checkHeaderLimits = (raw: Buffer, limits: HeaderLimits): void => {
  const end = headerEnd(raw, 0, Math.min(raw.length, limits.maxBytes + 1));
  if (end > limits.maxBytes) throw new AppError('too_large', `the message header is over the ${limits.maxBytes}-byte limit`);
  const header = raw.subarray(0, end);
  let lines = 0;
  for (let lf = header.indexOf(LF); lf >= 0; lf = header.indexOf(LF, lf + 1)) {
    lines += 1;
    if (lines > limits.maxLines) throw new AppError('too_large', `the message header has more than ${limits.maxLines} lines`);
  }
};
