/**
 * Line ends on the wire. IMAP sends messages with CRLF line ends (RFC 3501 section 2.2 and
 * RFC 5322 section 2.1), whatever bytes were stored: a bare LF or a bare CR becomes CRLF.
 * Sizes (RFC822.SIZE, BODYSTRUCTURE body-fld-octets) and line counts (body-fld-lines) are
 * of these normalized bytes, so they agree with what a FETCH sends.
 */

const CR = 0x0d;
const LF = 0x0a;

/** Whether `data[start, end)` holds a bare CR or LF (each costs one byte more on the wire). */
const barePositions = (data: Buffer, start: number, end: number, each: (at: number, kind: 'cr' | 'lf') => void): void => {
  for (let at = data.indexOf(LF, start); at !== -1 && at < end; at = data.indexOf(LF, at + 1)) {
    if (at === start || data[at - 1] !== CR) each(at, 'lf');
  }
  for (let at = data.indexOf(CR, start); at !== -1 && at < end; at = data.indexOf(CR, at + 1)) {
    if (at + 1 >= end || data[at + 1] !== LF) each(at, 'cr');
  }
};

/** Octets of `data[start, end)` once its line ends are CRLF. */
export const wireLength = (data: Buffer, start = 0, end = data.length): number => {
  let extra = 0;
  barePositions(data, start, end, () => (extra += 1));
  return end - start + extra;
};

/**
 * Lines of `data[start, end)` once its line ends are CRLF: the number of line ends, as
 * Dovecot counts body-fld-lines (a last line without its line end is not counted).
 */
export const wireLines = (data: Buffer, start = 0, end = data.length): number => {
  let lines = 0;
  for (let at = data.indexOf(LF, start); at !== -1 && at < end; at = data.indexOf(LF, at + 1)) lines += 1;
  barePositions(data, start, end, (_at, kind) => {
    if (kind === 'cr') lines += 1;
  });
  return lines;
};

/** `data` with every line end CRLF; `data` itself when it already is. */
export const toCrlf = (data: Buffer): Buffer => {
  const bare: number[] = [];
  barePositions(data, 0, data.length, (at) => bare.push(at));
  if (bare.length === 0) return data;
  bare.sort((a, b) => a - b);
  const out = Buffer.allocUnsafe(data.length + bare.length);
  let from = 0;
  let written = 0;
  for (const at of bare) {
    written += data.copy(out, written, from, at);
    out[written++] = CR;
    out[written++] = LF;
    from = at + 1;
  }
  written += data.copy(out, written, from);
  return out;
};
