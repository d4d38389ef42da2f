import { AppError } from './errors.js';

/**
 * Bytes held in memory at once across the requests or messages that share it: HTTP and MCP
 * request bodies (`http.maxBufferedBodyBytes`), and received mail on the MX, submission and
 * IMAP (`smtp.maxBufferedMessageBytes`). A holder takes bytes before it holds them and gives
 * them back once done. `tryTake` answers at once (a request refused with 503, a message that
 * goes to the spool instead); `take` waits its turn, first come first served.
 */
export class BodyBudget {
  private held = 0;
  /** Takes waiting, oldest first; each is granted once it fits, and none passes the oldest. */
  private readonly waiting: { bytes: number; grant: () => void }[] = [];

  constructor(readonly maxBytes: number) {}

  get heldBytes(): number {
    return this.held;
  }

  /** Takes waiting for their turn. */
  get waitingCount(): number {
    return this.waiting.length;
  }

  /**
   * Takes `bytes` now if they fit beside what is held and what the oldest waiting take needs
   * (a stream of small takes never keeps a large one waiting for good).
   */
  tryTake(bytes: number): boolean {
    if (this.held + bytes + (this.waiting[0]?.bytes ?? 0) > this.maxBytes) return false;
    this.held += bytes;
    return true;
  }

  /**
   * Resolves once `bytes` are taken: at once when nobody waits and they fit, else in turn as
   * others give back. A take larger than the whole budget is granted when nothing else is held.
   */
  take(bytes: number): Promise<void> {
    if (this.waiting.length === 0 && this.fits(bytes)) {
      this.held += bytes;
      return Promise.resolve();
    }
    return new Promise((grant) => this.waiting.push({ bytes, grant }));
  }

  give(bytes: number): void {
    this.held = Math.max(0, this.held - bytes);
    while (this.waiting.length > 0 && this.fits(this.waiting[0].bytes)) {
      const next = this.waiting.shift() as { bytes: number; grant: () => void };
      this.held += next.bytes;
      next.grant();
    }
  }

  private fits(bytes: number): boolean {
    return this.held + bytes <= this.maxBytes || this.held === 0;
  }
}

/**
 * Request body limits (config `http.*`), for every adapter on the HTTP listener: small
 * before authentication, the large one only for a caller whose key may send.
 */
export interface BodyLimits {
  /** `http.maxBodyBytes`: a send (REST /send, MCP) by a key with mail:send. */
  sendBytes: number;
  /** `http.maxSmallBodyBytes`: every other request body (register, MCP without such a key, webhooks, ...). */
  smallBytes: number;
  /** `http.maxBufferedBodyBytes`: request body bytes held at once across all requests. */
  budget: BodyBudget;
}

export interface BoundedBody {
  body: Buffer;
  /** Gives the bytes back to the budget; call when the response has ended (safe to call twice). */
  release(): void;
}

const busy = (): AppError => new AppError('unavailable', 'the server is receiving too many request bodies at once; retry shortly', { retryAfterSeconds: 1 });

const tooLarge = (limit: number): AppError => new AppError('too_large', `request body over ${limit} bytes`);

/**
 * Reads a request body of at most `limit` bytes under the shared budget. A declared
 * Content-Length is checked and reserved before anything is read; a body without one
 * reserves as it arrives. Over `limit`: 413; over the budget: 503 with Retry-After. The
 * source must not destroy the request when left early (`req.iterator({destroyOnReturn:
 * false})`): the answer still goes out on its connection, and the caller discards the rest.
 */
export const readBounded = async (source: AsyncIterable<Buffer>, declared: number | null, limit: number, budget: BodyBudget): Promise<BoundedBody> => {
  if (declared !== null && declared > limit) throw tooLarge(limit);
  let reserved = 0;
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    budget.give(reserved);
  };
  const reserve = (bytes: number) => {
    if (bytes <= reserved) return;
    if (!budget.tryTake(bytes - reserved)) throw busy();
    reserved = bytes;
  };
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    if (declared !== null) reserve(declared);
    // With a declared length the bytes go straight into one buffer: never the chunks and their copy at once.
    const whole = declared !== null ? Buffer.allocUnsafe(declared) : null;
    for await (const chunk of source) {
      if (size + chunk.length > limit) throw tooLarge(limit);
      reserve(size + chunk.length);
      if (whole && size + chunk.length <= whole.length) chunk.copy(whole, size);
      else chunks.push(chunk);
      size += chunk.length;
    }
    // Node's parser ends a body at its Content-Length, so `whole` is exactly filled.
    if (whole && chunks.length === 0 && size === whole.length) return { body: whole, release };
    if (whole) throw new AppError('invalid_input', 'the body does not match its Content-Length', { field: 'body' });
  } catch (error) {
    // Refused, or the client went away mid-body: nothing of it stays held.
    release();
    throw error;
  }
  return { body: Buffer.concat(chunks, size), release };
};

/** A Content-Length header as a number, or null when absent or not a plain decimal. */
export const declaredLength = (header: string | string[] | undefined): number | null => {
  const value = Array.isArray(header) ? header[0] : header;
  return value !== undefined && /^\d{1,15}$/.test(value) ? Number(value) : null;
};
