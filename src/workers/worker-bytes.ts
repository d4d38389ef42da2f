/**
 * A message's bytes as a thread is given them. Memory that threads share (a received message,
 * src/core/message-intake.ts) goes as a view of the same bytes: nothing is copied, and the
 * message is in memory once while the thread reads it. Other bytes go as an exact-size copy
 * whose memory moves to the thread (`transfer`), so the caller's stay its own.
 */
export const bytesForWorker = (raw: Buffer): { bytes: Uint8Array; transfer: ArrayBuffer[] } => {
  if (raw.buffer instanceof SharedArrayBuffer) return { bytes: new Uint8Array(raw.buffer, raw.byteOffset, raw.length), transfer: [] };
  const copy = new Uint8Array(raw);
  return { bytes: copy, transfer: [copy.buffer as ArrayBuffer] };
};
