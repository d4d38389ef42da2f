import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Context } from 'koa';
import { jsonChunks, textLength } from '../core/json-chunks.js';

/** A document with more text than this is sent in pieces. */
const PIECES_ABOVE_CHARS = 256 * 1024;

/**
 * Answers `value` as JSON. A large one (a message read with a 2 MB html body, planted by
 * anyone who can send mail) goes out piece by piece, one piece per turn of the event loop,
 * so other requests and sessions run in between instead of waiting for one long
 * JSON.stringify and its encoding, so /healthz stays fast while such a message is read
 * (docs/contributing/benchmarks.md, bench:mixed).
 */
export const sendJson = (ctx: Context, value: unknown): void => {
  if (textLength(value) <= PIECES_ABOVE_CHARS) {
    ctx.body = value;
    return;
  }
  ctx.type = 'application/json; charset=utf-8';
  ctx.body = Readable.from(inTurns(value), { objectMode: false });
};

/** Pieces gathered into writes of about this many characters, one per turn. */
const WRITE_CHARS = 65_536;

async function* inTurns(value: unknown): AsyncGenerator<Buffer> {
  let pending: string[] = [];
  let pendingChars = 0;
  for (const piece of jsonChunks(value, WRITE_CHARS)) {
    pending.push(piece);
    pendingChars += piece.length;
    if (pendingChars < WRITE_CHARS) continue;
    yield Buffer.from(pending.join(''), 'utf8');
    pending = [];
    pendingChars = 0;
    await nextTurn();
  }
  if (pending.length > 0) yield Buffer.from(pending.join(''), 'utf8');
}
