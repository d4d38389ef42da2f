import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Shared pieces of the benchmarks: numbers are printed, never asserted. */

export const argValue = (name: string, fallback: number): number => {
  const index = process.argv.indexOf(`--${name}`);
  const value = index >= 0 ? Number(process.argv[index + 1]) : fallback;
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number`);
  return value;
};

/** Every value of a flag given more than once (`--tree a=DIR --tree b=DIR`). */
export const stringArgs = (name: string): string[] =>
  process.argv.flatMap((arg, index) => (arg === `--${name}` && index + 1 < process.argv.length ? [process.argv[index + 1]] : []));

export const hasFlag = (name: string): boolean => process.argv.includes(`--${name}`);

export const tempDir = (prefix: string): { path: string; remove: () => void } => {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
};

/** Nearest-rank percentile of unsorted samples. */
export const percentile = (samples: number[], p: number): number => {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
};

export const fmt = (value: number, digits = 2): string => value.toFixed(digits);

/** A small deterministic PRNG (mulberry32), so every run builds the same mailbox. */
export const prng = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
  return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
};

const SYLLABLES = ['ka', 'lo', 'mi', 'ren', 'tas', 'vo', 'pel', 'dri', 'sun', 'bar', 'que', 'nix', 'ol', 'fen', 'gra', 'tu'];

/**
 * A vocabulary of `size` made-up words. Word i is drawn with a Zipf-like weight 1/(i+1),
 * so a few words are very common and most are rare, as in real mail.
 */
export const vocabulary = (size: number, random: () => number) => {
  const words: string[] = [];
  const seen = new Set<string>();
  while (words.length < size) {
    const length = 2 + Math.floor(random() * 3);
    let word = '';
    for (let i = 0; i < length; i += 1) word += SYLLABLES[Math.floor(random() * SYLLABLES.length)];
    if (!seen.has(word)) {
      seen.add(word);
      words.push(word);
    }
  }
  const cumulative: number[] = [];
  let total = 0;
  for (let i = 0; i < size; i += 1) cumulative.push((total += 1 / (i + 1)));
  const pick = (): string => {
    const target = random() * total;
    let low = 0;
    let high = size - 1;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (cumulative[mid] < target) low = mid + 1;
      else high = mid;
    }
    return words[low];
  };
  const sentence = (count: number): string => Array.from({ length: count }, pick).join(' ');
  return { words, pick, sentence };
};

/** A text/plain message of about `bytes` octets with CRLF line ends. */
export const messageOfSize = (index: number, to: string, bytes: number, sentence: (words: number) => string, extraHeaders: string[] = []): Buffer => {
  const head = [
    ...extraHeaders,
    `From: "Sender ${index % 97}" <sender${index % 97}@example.org>`,
    `To: <${to}>`,
    `Subject: ${sentence(6)}`,
    `Date: Mon, 02 Mar 2026 10:${String(index % 60).padStart(2, '0')}:00 +0000`,
    `Message-ID: <bench-${index}@example.org>`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: 7bit',
    '',
    '',
  ].join('\r\n');
  const lines: string[] = [];
  let size = head.length;
  while (size < bytes) {
    const line = sentence(10).slice(0, 76);
    lines.push(line);
    size += line.length + 2;
  }
  return Buffer.from(`${head + lines.join('\r\n')}\r\n`);
};
