import { Repo } from './repo.js';

/**
 * Values too large to copy in one synchronous step, kept as pieces (migration 84).
 *
 * better-sqlite3 writes a value in the call that inserts it, on the main thread: a message of
 * 24 MB (its raw bytes and its text) held the event loop for about a quarter of a second in its
 * commit, every connection and timer waiting (docs/operators/inbound.md "Large messages").
 * A value over one piece is written before that commit instead, a piece per transaction with a
 * turn of the event loop between them (Store.stage), and the commit only names it and marks it
 * attached. The pieces are committed without waiting for the disk: the WAL is written in order
 * and SQLite syncs it before any checkpoint, so the commit's sync makes them durable with it.
 *
 * A value holds bytes (a raw message, BLOB pieces) or a text (TEXT pieces, cut between UTF-16
 * code units that are not a surrogate pair). `size` and `piece_size` count in that unit.
 */
export const PIECE_SIZE = 1024 * 1024;

export class LargeValueRepo extends Repo {
  create(size: number, now: number): number {
    return Number(this.sql('INSERT INTO stored_values (size, piece_size, created_at) VALUES (?, ?, ?)').run(size, PIECE_SIZE, now).lastInsertRowid);
  }

  writePiece(valueId: number, seq: number, piece: Buffer | string): void {
    this.sql('INSERT INTO stored_pieces (value_id, seq, piece) VALUES (?, ?, ?)').run(valueId, seq, piece);
  }

  /** Inside the commit that stores the row naming it: from now on the row owns it. */
  attach(valueId: number): void {
    const { changes } = this.sql('UPDATE stored_values SET attached = 1 WHERE id = ? AND attached = 0').run(valueId);
    // A value is attached once, to one row: a second would be deleted with the first.
    if (changes !== 1) throw new Error(`stored value ${valueId} is missing or already attached`);
  }

  bytes(valueId: number): Buffer {
    return Buffer.concat(this.pieces(valueId) as Buffer[]);
  }

  text(valueId: number): string {
    return (this.pieces(valueId) as string[]).join('');
  }

  /** Bytes `start` to `end` (exclusive) of a value of bytes, reading only the pieces they fall in. */
  range(valueId: number, start: number, end: number): Buffer {
    const row = this.sql('SELECT size, piece_size AS pieceSize FROM stored_values WHERE id = ?').get(valueId) as
      | { size: number; pieceSize: number }
      | undefined;
    if (!row || end <= start || start >= row.size) return Buffer.alloc(0);
    const last = Math.min(end, row.size) - 1;
    const first = Math.floor(start / row.pieceSize);
    const pieces = this.sql('SELECT seq, piece FROM stored_pieces WHERE value_id = ? AND seq BETWEEN ? AND ? ORDER BY seq').all(
      valueId,
      first,
      Math.floor(last / row.pieceSize),
    ) as { seq: number; piece: Buffer }[];
    const joined = Buffer.concat(pieces.map((piece) => piece.piece));
    const offset = first * row.pieceSize;
    return joined.subarray(start - offset, last + 1 - offset);
  }

  /** A copy of a value for another row (IMAP COPY), attached to it at once. */
  copy(valueId: number): number {
    const copied = Number(
      this.sql('INSERT INTO stored_values (size, piece_size, created_at, attached) SELECT size, piece_size, created_at, 1 FROM stored_values WHERE id = ?').run(
        valueId,
      ).lastInsertRowid,
    );
    this.sql('INSERT INTO stored_pieces (value_id, seq, piece) SELECT ?, seq, piece FROM stored_pieces WHERE value_id = ?').run(copied, valueId);
    return copied;
  }

  /** Values written for a commit that never came (a crash, a refused message) before `before`. */
  sweepUnattached(before: number): number {
    return this.sql('DELETE FROM stored_values WHERE attached = 0 AND created_at < ?').run(before).changes;
  }

  private pieces(valueId: number): (Buffer | string)[] {
    return this.sql('SELECT piece FROM stored_pieces WHERE value_id = ? ORDER BY seq').pluck().all(valueId) as (Buffer | string)[];
  }
}

/** `value` cut into pieces of PIECE_SIZE units; a text is never cut inside a surrogate pair. */
export const piecesOf = (value: Buffer | string): (Buffer | string)[] => {
  const pieces: (Buffer | string)[] = [];
  for (let start = 0; start < value.length; ) {
    let end = Math.min(value.length, start + PIECE_SIZE);
    if (typeof value === 'string' && end < value.length && isLowSurrogate(value.charCodeAt(end))) end -= 1;
    pieces.push(typeof value === 'string' ? value.slice(start, end) : value.subarray(start, end));
    start = end;
  }
  return pieces;
};

const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff;
