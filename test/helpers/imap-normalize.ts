import { parseResponses, type Value } from './imap-responses.js';

/** One command's answer, reduced to what two servers must agree on. */
export interface Normalized {
  status: string;
  lines: string[];
}

const lower = (value: Value): Value => (value === null ? null : Array.isArray(value) ? value.map(lower) : value.toLowerCase());
const sorted = (value: Value): Value => (Array.isArray(value) ? [...value].map((item) => item ?? 'NIL').sort() : value);

/** Numbers each server picks for itself (UIDVALIDITY, mod-sequences) become "*"; the rest stays. */
const code = (text: string): string => {
  const match = /^\[([A-Z-]+)(?: (.*))?\]$/s.exec(text);
  if (!match) return text;
  const [, name, args = ''] = match;
  if (name === 'UIDVALIDITY' || name === 'HIGHESTMODSEQ') return `[${name} *]`;
  if (name === 'APPENDUID' || name === 'COPYUID') return `[${name} * ${args.split(' ').slice(1).join(' ')}]`;
  if (name === 'PERMANENTFLAGS') return `[${name} (${args.replace(/[()]/g, '').split(' ').filter(Boolean).sort().join(' ')})]`;
  if (name === 'CAPABILITY') return '[CAPABILITY]';
  return args ? `[${name} ${args}]` : `[${name}]`;
};

const fetchItems = (items: Value[]): string => {
  const out: Record<string, unknown> = {};
  for (let index = 0; index + 1 < items.length; index += 2) {
    const name = String(items[index]).toUpperCase();
    let value = items[index + 1];
    if (name === 'FLAGS') value = sorted(value);
    if (name === 'BODYSTRUCTURE' || name === 'BODY') value = lower(value);
    if (name === 'MODSEQ') value = '*';
    if (name === 'INTERNALDATE') value = String(Date.parse(String(value).replace(/^(\d+)-(\w+)-(\d+) /, '$2 $1 $3 ')));
    out[name] = value;
  }
  return JSON.stringify(Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b))));
};

/** The original sequence numbers a run of "* n EXPUNGE" removed, whatever order they came in. */
const expunged = (sequences: number[]): number[] => {
  const positions = Array.from({ length: Math.max(0, ...sequences) + sequences.length }, (_, index) => index + 1);
  return sequences.map((sequence) => positions.splice(sequence - 1, 1)[0]).sort((a, b) => a - b);
};

const untagged = (values: Value[]): string | null => {
  const [first, second, ...rest] = values;
  const word = String(first).toUpperCase();
  if (word === 'CAPABILITY') return null;
  if (word === 'OK' || word === 'NO' || word === 'BAD') return typeof second === 'string' && second.startsWith('[') ? `${word} ${code(second)}` : null;
  if (word === 'FLAGS') return `FLAGS ${JSON.stringify(sorted(second))}`;
  if (word === 'LIST' || word === 'LSUB') return `${word} ${JSON.stringify([sorted(second), ...rest])}`;
  if (word === 'STATUS') {
    const items = (rest[0] as Value[]) ?? [];
    const pairs: [string, Value][] = [];
    for (let index = 0; index + 1 < items.length; index += 2) {
      const name = String(items[index]).toUpperCase();
      pairs.push([name, /^(UIDVALIDITY|HIGHESTMODSEQ)$/.test(name) ? '*' : items[index + 1]]);
    }
    return `STATUS ${second} ${JSON.stringify(Object.fromEntries(pairs.sort(([a], [b]) => a.localeCompare(b))))}`;
  }
  if (String(second).toUpperCase() === 'FETCH') return `${first} FETCH ${fetchItems((rest[0] as Value[]) ?? [])}`;
  return values.map((value) => JSON.stringify(value)).join(' ');
};

/** A command's answer from a server's raw response text. */
export const normalize = (tag: string, text: string): Normalized => {
  const lines: string[] = [];
  const expunges: number[] = [];
  let status = '(none)';
  for (const response of parseResponses(text)) {
    if (response.tag === tag) {
      const [word, second] = response.values;
      status = `${String(word)}${typeof second === 'string' && second.startsWith('[') ? ` ${code(second)}` : ''}`;
      continue;
    }
    if (response.tag !== '*') continue;
    if (String(response.values[1]).toUpperCase() === 'EXPUNGE') {
      expunges.push(Number(response.values[0]));
      continue;
    }
    const line = untagged(response.values);
    if (line !== null) lines.push(line);
  }
  if (expunges.length > 0) lines.push(`EXPUNGED ${expunged(expunges).join(',')}`);
  return { status, lines: lines.sort() };
};
