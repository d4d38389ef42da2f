/**
 * The body of a parse thread (see parse-pool.ts): runs mailparser off the main event loop.
 * From source it starts via parse-thread-source.ts (tsx registered in the thread); in the
 * single executable, scripts/package.mjs bundles it to one CommonJS asset that needs only
 * Node builtins and is started with `eval: true`.
 */
import { parentPort } from 'node:worker_threads';
import { parseMessage } from '../../mime/parse.js';
import type { ParseReply, ParseRequest, ParseResult, WireParsedMessage } from './parse-protocol.js';

const port = parentPort;
if (!port) throw new Error('parse-thread runs only as a worker thread');

/**
 * Each attachment gets its own exact-size ArrayBuffer, moved (not copied) to the main
 * thread. A Buffer that is a view into a larger one (mailparser's chunks, Node's pool)
 * would otherwise be cloned with its whole backing store.
 */
const toWire = (parsed: Awaited<ReturnType<typeof parseMessage>>): { wire: WireParsedMessage; transfer: ArrayBuffer[] } => {
  const attachments = parsed.attachments.map((attachment) => ({ ...attachment, content: new Uint8Array(attachment.content) }));
  return { wire: { ...parsed, attachments }, transfer: attachments.map((attachment) => attachment.content.buffer as ArrayBuffer) };
};

/** Results finished in this turn, posted together at its end (see parse-protocol.ts). */
let results: ParseResult[] = [];
let transfer: ArrayBuffer[] = [];

const reply = (result: ParseResult, moved: ArrayBuffer[] = []): void => {
  if (results.length === 0) setImmediate(flush);
  results.push(result);
  transfer.push(...moved);
};

const flush = (): void => {
  port.postMessage({ type: 'results', results } satisfies ParseReply, transfer);
  results = [];
  transfer = [];
};

const parseOne = async (request: ParseRequest): Promise<void> => {
  const raw = Buffer.from(request.raw.buffer, request.raw.byteOffset, request.raw.byteLength);
  try {
    const { wire, transfer: moved } = toWire(await parseMessage(raw));
    reply({ type: 'parsed', id: request.id, parsed: wire }, moved);
  } catch (error) {
    // parseMessage keeps unparsable mail with empty fields, so this is a bug, reported per message.
    reply({ type: 'failed', id: request.id, error: error instanceof Error ? error.message : String(error) });
  }
};

/**
 * One parse at a time, in arrival order. Parses started together interleave (mailparser
 * works through streams) and all finish about when the last does; in order, each result
 * goes back as soon as its own parse ends. On bench:ingest this cut the time from handing a
 * message to the thread to having it back from 2.1 to 1.6 ms.
 */
const waiting: ParseRequest[] = [];
let draining = false;

const drain = async (): Promise<void> => {
  if (draining) return;
  draining = true;
  for (let request = waiting.shift(); request; request = waiting.shift()) await parseOne(request);
  draining = false;
};

port.on('message', (requests: ParseRequest[]) => {
  waiting.push(...requests);
  void drain();
});

port.postMessage({ type: 'ready' } satisfies ParseReply);
