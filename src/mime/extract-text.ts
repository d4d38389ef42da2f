import EmailReplyParser from 'email-reply-parser';

/**
 * The new text of a message: the text without the quoted history and the signature, as
 * email-reply-parser (a port of GitHub's EmailReplyParser) finds them: "On ... wrote:" and
 * "From: ... <address>" headers in many languages, "-----Original Message-----", lines
 * quoted with ">", and signature lines ("-- ", "Sent from my ...").
 *
 * Its regular expressions backtrack (without the optional re2 addon, which this project
 * does not ship), and some cost the square of a line's length or scan the whole text from
 * every line. It runs in a parse worker under the parse's time budget, and within these
 * bounds, which keep the worst crafted text well inside it (docs/contributing/benchmarks.md):
 * - a text longer than EXTRACT_MAX_CHARS is not given to it (nothing is removed);
 * - a line longer than HIDDEN_LINE_CHARS is replaced, while it runs, by a short token that
 *   keeps its leading ">" quote marks: such a line is content (a quote header or a
 *   signature line is never that long), so its classification only depends on those marks.
 */
export const EXTRACT_MAX_CHARS = 128 * 1024;
export const HIDDEN_LINE_CHARS = 256;

/** Private-use code points (never in a token's own content: lines holding one are hidden too). */
const OPEN = '\uE000';
const CLOSE = '\uE001';
const TOKEN = /\uE000(\d+)\uE001/g;

const parser = new EmailReplyParser();

/**
 * Literals without which none of email-reply-parser 2.3's patterns can match (each quote
 * header and signature pattern in its regex.js needs one of these, in the case given; the
 * ones it tests case-insensitively are looked for in the lowercased text). A text with none
 * of them and no line starting with ">" is one fragment that is neither quote nor signature,
 * and the parser only trims it (see `untouched`). Most mail that quotes nothing passes this
 * check in microseconds, far less than the parser (it reverses every line twice and tries
 * some 60 patterns on it; docs/contributing/benchmarks.md). A literal matching by chance
 * costs only that time: the parser then runs. test/extracted-text.test.ts checks both ways
 * agree on random texts.
 */
const CASED_LITERALS = [
  ...['wrote', 'écrit', 'escribió', 'scritto', 'escreveu', 'schrieb', 'schreef', 'pisze', 'napisał', 'skrev', 'kirjoitti'],
  ...['г.', '写道', '작성:', 'のメッセージ:', '>:'],
  ...['--', '__', '++', '==', 'Sent from ', 'Get Outlook for ', 'gesendet', 'Gesendet von ', 'Sendt fra '],
  ...['Envoyé ', 'Télécharger Outlook pour ', 'Enviado desde ', 'Verzonden vanaf ', 'Verstuurd vanaf '],
];
const UNCASED_LITERALS = ['riginal', 'prindelig', "d'origine", 'ursprüngliche', 'cheers', 'best wishes', 'regards', 'vous', 'cordialement', 'bonne '];
/**
 * Two quote header patterns end in `"( *)<(.*)>( *):`; five start "From:" in some language.
 * Each is tried only where its first literal is in the text: a pattern that starts with an
 * alternation is scanned at every position.
 */
const ANGLE_COLON = />[ ]*:/;
const FIELD_NAMES = ['From', 'Von', 'De', 'Van', 'Da'];
const FIELD = /(?:From|Von|De|Van|Da)\s?:/;

const hasQuoteMarks = (text: string): boolean =>
  text.startsWith('>') ||
  text.includes('\n>') ||
  (text.includes('>') && ANGLE_COLON.test(text)) ||
  (FIELD_NAMES.some((name) => text.includes(name)) && FIELD.test(text));

const mayHaveFragments = (text: string): boolean => {
  if (hasQuoteMarks(text) || CASED_LITERALS.some((literal) => text.includes(literal))) return true;
  const lower = text.toLowerCase();
  return UNCASED_LITERALS.some((literal) => lower.includes(literal));
};

/**
 * What the parser makes of a text with one fragment, neither quote nor signature: each line
 * without its trailing white space, the first newline dropped, trailing "~" cut; nothing
 * when every line is empty (an empty fragment is hidden).
 */
const untouched = (text: string): string => {
  const lines = text.split('\n').map((line) => line.trimEnd());
  if (lines.every((line) => line === '')) return '';
  return withoutTrailingTildes(lines.join('\n').replace(/^\n/, ''));
};

/** `/~*$/` replaced by nothing, as the parser does, without trying the pattern at every position. */
const withoutTrailingTildes = (text: string): string => {
  let end = text.length;
  while (end > 0 && text[end - 1] === '~') end -= 1;
  return text.slice(0, end);
};

/** email-reply-parser's visible text, without running it where it can find nothing. */
export const parseReply = (text: string): string => (mayHaveFragments(text) ? parser.parseReply(text) : untouched(text));

/** The new text, without trailing white space (trimEnd: a regular expression for it is quadratic on long runs of spaces). */
export const extractReplyText = (text: string): string => {
  if (text.length > EXTRACT_MAX_CHARS) return text.trimEnd();
  const hidden: string[] = [];
  const lines = text
    .replace(/\r\n/g, '\n')
    .split('\n')
    .map((line) => {
      if (line.length <= HIDDEN_LINE_CHARS && !line.includes(OPEN)) return line;
      const marks = /^[ \t]*>[> \t]*/.exec(line)?.[0] ?? '';
      hidden.push(line.slice(marks.length));
      return `${marks}${OPEN}${hidden.length - 1}${CLOSE}`;
    });
  const visible = parseReply(lines.join('\n'));
  const restored = hidden.length === 0 ? visible : visible.replace(TOKEN, (_token, index: string) => hidden[Number(index)] ?? '');
  return restored.trimEnd();
};
