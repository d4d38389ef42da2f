import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Test } from 'tap';
import { type CommandResult, runCommand, type ServerProcess, startServerProcess } from './process.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The CLI as an operator runs it (bin/agentpost builds dist/app when a source is newer). */
export const agentpostBin = join(root, 'bin', 'agentpost');

/** One `serve` process of a cluster on a shared data folder. */
export interface ClusterNode {
  nodeId: string;
  baseUrl: string;
  smtpPort: number;
  imapPort: number;
  process: ServerProcess;
  /** Sends the signal (SIGKILL: a crash mid-work) and resolves with how the process ended. */
  kill(signal?: NodeJS.Signals): Promise<CommandResult>;
  /** The JSON log lines the process wrote so far. */
  logLines(): Record<string, unknown>[];
}

export interface ClusterOptions {
  /** How many processes, or their node ids (default node-1, node-2, ...). */
  nodes: number | string[];
  /** The shared data folder; default a fresh one under the test's folder. */
  dataDir?: string;
  /** AGENTPOST_* settings for every node (strings, as the environment has them). */
  env?: Record<string, string>;
  /**
   * Settings only a config file holds (outbound.relay, limits, schedules), for every node, or
   * per node (a function of its id): each node reads its own file.
   */
  config?: Record<string, unknown> | ((nodeId: string) => Record<string, unknown>);
}

export interface Cluster {
  dataDir: string;
  nodes: ClusterNode[];
  /** Starts one more node on the same folder (a node started again after a kill, under its old id or a new one). */
  start(nodeId: string): Promise<ClusterNode>;
  /** Runs an admin command of the CLI against the shared data folder, as an operator would while the nodes run. */
  cli(...args: string[]): Promise<CommandResult>;
}

/**
 * Starts several `serve` processes on one data folder (docs/design.md, "Several processes on
 * one store"): each with its own ports (0: free ones) and its own AGENTPOST_NODE_ID, all with
 * the same AGENTPOST_DATA_DIR, so they share the store and the secret keys. Nodes start one
 * after another: the first runs the migrations. Killed at teardown if still up.
 */
export const startCluster = async (t: Test, options: ClusterOptions): Promise<Cluster> => {
  const dataDir = options.dataDir ?? join(t.testdir({}), 'data');
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AGENTPOST_')));
  const env: NodeJS.ProcessEnv = {
    ...inherited,
    AGENTPOST_DATA_DIR: dataDir,
    AGENTPOST_HTTP_PORT: '0',
    AGENTPOST_SMTP_PORT: '0',
    AGENTPOST_PARSE_THREADS: '1',
    // No DNS from the tests' machine: the checks of received mail are off unless a test turns them on.
    AGENTPOST_SMTP_AUTHENTICATION_CHECKS: 'false',
    ...options.env,
  };
  const configFile = (nodeId: string): Record<string, string> => {
    if (!options.config) return {};
    const file = join(dirname(dataDir), `config-${nodeId}.json`);
    writeFileSync(file, JSON.stringify(typeof options.config === 'function' ? options.config(nodeId) : options.config));
    return { AGENTPOST_CONFIG: file };
  };
  const start = async (nodeId: string): Promise<ClusterNode> => {
    const server = await startServerProcess(t, agentpostBin, ['serve'], { env: { ...env, ...configFile(nodeId), AGENTPOST_NODE_ID: nodeId } });
    const listening = jsonLines(server.output().stderr).find((line) => line.message === 'agentpost listening');
    if (listening?.node !== nodeId) throw new Error(`${nodeId} started as node ${String(listening?.node)}`);
    return {
      nodeId,
      baseUrl: server.baseUrl,
      smtpPort: server.ports.smtp,
      imapPort: server.ports.imap,
      process: server,
      kill: (signal = 'SIGTERM') => server.stop(signal),
      logLines: () => jsonLines(server.output().stderr),
    };
  };
  const ids = typeof options.nodes === 'number' ? Array.from({ length: options.nodes }, (_, i) => `node-${i + 1}`) : options.nodes;
  const nodes: ClusterNode[] = [];
  for (const id of ids) nodes.push(await start(id));
  return { dataDir, nodes, start, cli: (...args) => runCommand(agentpostBin, args, { env: { ...env, ...configFile('cli') } }) };
};

const jsonLines = (text: string): Record<string, unknown>[] =>
  text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
