/** `--name value`, `--name=value` and bare `--flag` become flags; the rest are words. */
export interface ParsedArgs {
  words: string[];
  flags: Record<string, string | true>;
}

export const parseArgs = (argv: readonly string[]): ParsedArgs => {
  const words: string[] = [];
  const flags: Record<string, string | true> = {};
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (!arg.startsWith('--')) {
      words.push(arg);
      continue;
    }
    const body = arg.slice(2);
    const eq = body.indexOf('=');
    if (eq >= 0) flags[body.slice(0, eq)] = body.slice(eq + 1);
    else if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) flags[body] = argv[++i];
    else flags[body] = true;
  }
  return { words, flags };
};
