/** Runs the CLI with the given app options and exits with its code (each entry's last step). */
import type { AppOptions } from '../src/main.js';
import { runCli } from './cli.js';

export const runAndExit = (options: AppOptions): void => {
  runCli(process.argv.slice(2), options).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`agentpost: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
};
