/** The IMAP notation (src/mime/imap-notation.ts), and the date forms of RFC 3501. */
export { atom, bytes, nstr, serialize, serializeAll, str, type Chunk, type ImapValue } from '../mime/imap-notation.js';
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad = (value: number, width = 2): string => String(value).padStart(width, '0');

/** RFC 3501 date-time: "dd-Mon-yyyy hh:mm:ss +0000", in UTC. */
export const imapDateTime = (at: number): string => {
  const date = new Date(at);
  return (
    `${pad(date.getUTCDate())}-${MONTHS[date.getUTCMonth()]}-${date.getUTCFullYear()} ` +
    `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())} +0000`
  );
};

/** RFC 3501 date: "d-Mon-yyyy"; returns midnight UTC in Unix milliseconds, or null. */
export const parseImapDate = (text: string): number | null => {
  const match = /^(\d{1,2})-([A-Za-z]{3})-(\d{4})$/.exec(text);
  if (!match) return null;
  const month = MONTHS.findIndex((name) => name.toLowerCase() === match[2].toLowerCase());
  if (month === -1) return null;
  const day = Number(match[1]);
  const at = Date.UTC(Number(match[3]), month, day);
  return new Date(at).getUTCDate() === day ? at : null;
};

/** RFC 3501 date-time (an APPEND's internal date): "dd-Mon-yyyy hh:mm:ss +zzzz"; Unix milliseconds, or null. */
export const parseImapDateTime = (text: string): number | null => {
  const match = /^ ?(\d{1,2})-([A-Za-z]{3})-(\d{4}) (\d{2}):(\d{2}):(\d{2}) ([+-])(\d{2})(\d{2})$/.exec(text);
  if (!match) return null;
  const day = parseImapDate(`${match[1]}-${match[2]}-${match[3]}`);
  const [hours, minutes, seconds, zoneHours, zoneMinutes] = [match[4], match[5], match[6], match[8], match[9]].map(Number);
  if (day === null || hours > 23 || minutes > 59 || seconds > 60 || zoneMinutes > 59) return null;
  const offset = (match[7] === '-' ? -1 : 1) * (zoneHours * 60 + zoneMinutes) * 60_000;
  return day + ((hours * 60 + minutes) * 60 + seconds) * 1000 - offset;
};
