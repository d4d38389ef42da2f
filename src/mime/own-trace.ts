import { headerBlocks } from './mime-tree.js';

/**
 * The stored bytes of a message without the Received field this service put on top when its
 * MX stored it (src/services/mail/trace.ts: `by <hostname> (agentpost)`): the message as it
 * arrived, but for the Authentication-Results field, which the junk filter does not read.
 * Returns the input itself when the top field is not ours.
 */
export const withoutOwnTrace = (raw: Buffer, hostname: string): Buffer => {
  const marker = `by ${hostname.toLowerCase()} (agentpost)`;
  let offset = 0;
  for (const block of headerBlocks(raw)) {
    const unfolded = block.bytes.toString('latin1').replace(/\s+/g, ' ').toLowerCase();
    if (block.name !== 'received' || !unfolded.includes(marker)) break;
    offset += block.bytes.length;
  }
  return offset === 0 ? raw : raw.subarray(offset);
};
