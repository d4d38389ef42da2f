import type { Readable } from 'node:stream';

/** Collects a DATA stream; smtp-server keeps counting past the SIZE limit and flags it. */
export const readMessage = async (stream: Readable & { sizeExceeded?: boolean }): Promise<Buffer | null> => {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) {
    if (!stream.sizeExceeded) chunks.push(chunk as Buffer);
  }
  return stream.sizeExceeded ? null : Buffer.concat(chunks);
};
