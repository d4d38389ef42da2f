/**
 * The body of a parse worker (see parse-pool.ts): runs mailparser off the main event loop.
 * From source it starts via parse-worker-source.ts (tsx registered in the thread); in the
 * single executable, scripts/package.mjs bundles it to one CommonJS asset that needs only
 * Node builtins and is started with `eval: true`.
 */
import { parentPort } from 'node:worker_threads';
import type { ParsedMessage } from '../core/parsed-message.js';
import { loadMailparser, parseMessage } from '../mime/parse.js';
import { releaseWhenQuiet } from '../runtime/memory-release.js';
import { bodyToWire, type ParseReply, type ParseRequest, type ParseResult, type WireParsedMessage } from './parse-protocol.js';
import { perTurn } from './turn-batch.js';

const port = parentPort;
if (!port) throw new Error('parse-thread runs only as a worker thread');
// Loaded now, not inside the first message's time budget.
void loadMailparser();

/** The body carries text, HTML and attachments; the pool takes them from there. */
const toWire = ({ text: _text, html: _html, attachments: _attachments, body, ...fields }: ParsedMessage): WireParsedMessage => {
  if (!body) throw new Error('the parse built no stored body');
  return { ...fields, body: bodyToWire(body) };
};

/** Results finished in this turn, posted together at its end. */
const reply = perTurn<ParseResult>((results) => port.postMessage({ type: 'results', results } satisfies ParseReply));

const parseOne = async (request: ParseRequest): Promise<void> => {
  const raw = Buffer.from(request.raw.buffer, request.raw.byteOffset, request.raw.byteLength);
  try {
    reply({ type: 'parsed', id: request.id, parsed: toWire(await parseMessage(raw, { fallback: request.fallback, junkFeatures: request.junkFeatures })) });
  } catch (error) {
    // parseMessage keeps unparsable mail with its fallback, so this is a bug, reported per message.
    reply({ type: 'failed', id: request.id, error: error instanceof Error ? error.message : String(error) });
  }
};

/**
 * One parse at a time, in arrival order. Parses started together interleave (mailparser
 * works through streams) and all finish about when the last does; in order, each result
 * goes back as soon as its own parse ends, which shortens each message's wait
 * (docs/contributing/benchmarks.md, "Worker threads").
 */
const waiting: ParseRequest[] = [];
let draining = false;

const drain = async (): Promise<void> => {
  if (draining) return;
  draining = true;
  for (let request = waiting.shift(); request; request = waiting.shift()) await parseOne(request);
  draining = false;
};

/** This thread's heap too is collected once a burst is over (memory-release.ts). */
const quiet = releaseWhenQuiet(10_000);
// Loading mailparser leaves garbage too: collected once the thread has been quiet as long.
quiet.touch();

port.on('message', (requests: ParseRequest[]) => {
  quiet.touch();
  waiting.push(...requests);
  void drain();
});

port.postMessage({ type: 'ready' } satisfies ParseReply);
