/** `--name value`, `--name=value` and bare `--flag` become flags; the rest are words. */
export interface ParsedArgs {
  words: string[];
  flags: Record<string, string | true>;
}

/**
 * Boolean flags never take the next word as their value (`--trust-proxy serve` keeps `serve`
 * a command); give them one with `--trust-proxy=false`.
 */
export const parseArgs = (argv: readonly string[], booleanFlags: ReadonlySet<string> = new Set()): ParsedArgs => {
  const words: string[] = [];
  const flags: Record<string, string | true> = {};
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === '-h') {
      flags.help = true;
      continue;
    }
    if (!arg.startsWith('--')) {
      words.push(arg);
      continue;
    }
    const body = arg.slice(2);
    const eq = body.indexOf('=');
    if (eq >= 0) flags[body.slice(0, eq)] = body.slice(eq + 1);
    else if (!booleanFlags.has(body) && i + 1 < argv.length && !argv[i + 1].startsWith('--')) flags[body] = argv[++i];
    else flags[body] = true;
  }
  return { words, flags };
};
