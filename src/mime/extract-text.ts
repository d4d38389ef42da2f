import EmailReplyParser from 'email-reply-parser';

/**
 * The new text of a message: the text without the quoted history and the signature, as
 * email-reply-parser (a port of GitHub's EmailReplyParser) finds them: "On ... wrote:" and
 * "From: ... <address>" headers in many languages, "-----Original Message-----", lines
 * quoted with ">", and signature lines ("-- ", "Sent from my ...").
 *
 * Its regular expressions backtrack (without the optional re2 addon, which this project
 * does not ship), and some cost the square of a line's length or scan the whole text from
 * every line. It runs in a parse thread under the parse's time budget, and within these
 * bounds, measured at about 120 ms for the worst 128 KB of crafted lines:
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
  const visible = parser.parseReply(lines.join('\n'));
  const restored = hidden.length === 0 ? visible : visible.replace(TOKEN, (_token, index: string) => hidden[Number(index)] ?? '');
  return restored.trimEnd();
};
