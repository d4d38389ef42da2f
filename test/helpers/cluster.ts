import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Test } from 'tap';
import { runCommand, startServerProcess, type CommandResult, type ServerProcess } from './process.js';

const agentpost = join(resolve(dirname(fileURLToPath(import.meta.url)), '..', '..'), 'bin', 'agentpost');

export interface ClusterOptions {
  /** How many `serve` processes share the data folder. */
  nodes: number;
  /** The shared data folder; absent: `data` in the test's t.testdir (a test with a testdir of its own passes a folder in it). */
  dataDir?: string;
  /** Variables added to every node's environment (the runner's AGENTPOST_* are dropped). */
  env?: NodeJS.ProcessEnv;
}

export interface ClusterNode {
  baseUrl: string;
  smtpPort: number;
  imapPort: number;
  server: ServerProcess;
  /** Sends the signal (SIGTERM unless given) and resolves with how the process ended. */
  kill(signal?: NodeJS.Signals): Promise<CommandResult>;
}

export interface Cluster {
  dataDir: string;
  nodes: ClusterNode[];
  /** The admin CLI on the same data folder (one more process); its stdout, or a throw when it fails. */
  cli(...args: string[]): Promise<string>;
}

/**
 * Several `agentpost serve` processes on one data folder, each on its own ports (port 0), as
 * docs/design.md "Several processes: wake-ups and exactness" describes. They start one after
 * another, so the first creates and migrates the store and its keys; every process is killed at
 * teardown if still up.
 */
export const startCluster = async (t: Test, options: ClusterOptions): Promise<Cluster> => {
  const dataDir = options.dataDir ?? join(t.testdir({}), 'data');
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AGENTPOST_')));
  const env = { ...inherited, ...options.env };
  const nodes: ClusterNode[] = [];
  for (let index = 0; index < options.nodes; index += 1) {
    const server = await startServerProcess(
      t,
      agentpost,
      ['serve', '--data-dir', dataDir, '--http-port', '0', '--smtp-port', '0', '--imap-port', '0', '--parse-threads', '1'],
      { env },
    );
    nodes.push({ baseUrl: server.baseUrl, smtpPort: server.ports.smtp, imapPort: server.ports.imap, server, kill: (signal) => server.stop(signal) });
  }
  const cli = async (...args: string[]): Promise<string> => {
    const result = await runCommand(agentpost, [...args, '--data-dir', dataDir], { env });
    if (result.code !== 0) throw new Error(`agentpost ${args.join(' ')} failed: ${result.stderr}`);
    return result.stdout;
  };
  return { dataDir, nodes, cli };
};
