// A person's search words as an FTS5 query over the full-text index (store/search-db.ts).

/** The columns a search looks in: never the folder token (migration 007). */
const TEXT_COLUMNS = '{subject participants body}';

/**
 * The folder column holds one token, `f` and the folder id (store/search-db.ts), so a whole
 * word without a digit cannot match there and needs no filter to keep it out. Dropping it
 * matters for a word in most messages: FTS5 checks a filter against each matching row's
 * positions, a third of the time of counting such a word.
 */
const needsTextFilter = (word: string, prefix: string): boolean => prefix !== '' || /\p{N}/u.test(word);

/** Scripts written without spaces: unicode61 makes a whole run of them one token. */
const UNSPACED_SCRIPT = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}]/u;

export interface FtsQueryOptions {
  /** `body` for IMAP SEARCH BODY; `text` (subject, participants, body) otherwise. */
  columns?: 'text' | 'body';
  /** Every word matches as a prefix: IMAP SEARCH TEXT/BODY, whose RFC 3501 meaning is a substring. */
  prefixAlways?: boolean;
}

/**
 * Each whitespace-separated word becomes a quoted FTS5 term in the given columns; terms
 * are ANDed. A word matches whole words of the same stem (porter: "invoice" finds
 * "invoices"); a trailing `*` asks for a prefix ("quart*" finds "quarterly"), as does a
 * word in a script written without spaces, whose runs are single tokens. Prefixes are not
 * the default because FTS5 merges the doclists of every word a prefix matches.
 * Control characters separate words: FTS5 reads its query as a C string, so a NUL inside a
 * quoted term would cut the query short and fail it.
 */
export const toFtsQuery = (search: string, options: FtsQueryOptions = {}): string | null => {
  const terms = search.split(/[\s\p{Cc}]+/u).filter((term) => /[\p{L}\p{N}]/u.test(term));
  if (terms.length === 0) return null;
  const filter = options.columns === 'body' ? 'body' : TEXT_COLUMNS;
  return terms
    .map((term) => {
      const word = term.replace(/\*+$/, '');
      const prefix = word !== term || options.prefixAlways || UNSPACED_SCRIPT.test(word) ? '*' : '';
      const column = filter === TEXT_COLUMNS && !needsTextFilter(word, prefix) ? '' : `${filter} : `;
      return `${column}"${word.replaceAll('"', '""')}"${prefix}`;
    })
    .join(' AND ');
};
