import { spawn, type ChildProcess } from 'node:child_process';
import type { Test } from 'tap';
import { assertMatchesOpenApi } from './openapi.js';

export interface CommandResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface SpawnOptions {
  cwd?: string;
  /** The whole environment of the child (nothing is inherited unless passed). */
  env?: NodeJS.ProcessEnv;
}

/** Runs a command to its end and collects its output. */
export const runCommand = (command: string, args: readonly string[], options: SpawnOptions = {}): Promise<CommandResult> =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    const output = collect(child);
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, ...output() }));
  });

export interface ServerProcess {
  ports: { http: number; smtp: number; imap: number };
  baseUrl: string;
  child: ChildProcess;
  output(): { stdout: string; stderr: string };
  /** Sends the signal and resolves with how the process ended. */
  stop(signal?: NodeJS.Signals): Promise<CommandResult>;
}

/**
 * Starts `serve` as a child process and waits for its "agentpost listening" log line,
 * which names the ports it bound (port 0 picks free ones). Killed at teardown if still up.
 */
export const startServerProcess = (t: Test, command: string, args: readonly string[], options: SpawnOptions = {}): Promise<ServerProcess> =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: withFreeListenerPorts(args, options.env ?? process.env), stdio: ['ignore', 'pipe', 'pipe'] });
    const output = collect(child);
    const ended = new Promise<CommandResult>((done) => child.once('close', (code, signal) => done({ code, signal, ...output() })));
    t.teardown(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    child.once('error', reject);
    void ended.then((result) => reject(new Error(`agentpost exited before listening (${result.code ?? result.signal}):\n${result.stderr}`)));
    const watch = () => {
      const listening = findListeningLine(output().stderr);
      if (!listening) return;
      child.stderr?.off('data', watch);
      resolve({
        ports: { http: listening.http, smtp: listening.smtp, imap: listening.imap },
        baseUrl: listening.baseUrl,
        child,
        output,
        stop: (signal = 'SIGTERM') => {
          child.kill(signal);
          return ended;
        },
      });
    };
    child.stderr?.on('data', watch);
  });

/**
 * Tests that run servers side by side set their HTTP and SMTP ports; the IMAP and
 * submission ports (plain and TLS) they do not mention are 0 too, so parallel servers (or a server left
 * running on the machine) never fight over the defaults 2143 and 2587.
 */
const withFreeListenerPorts = (args: readonly string[], env: NodeJS.ProcessEnv): NodeJS.ProcessEnv => {
  const out = { ...env };
  if (!args.includes('--imap-port') && env.AGENTPOST_IMAP_PORT === undefined) out.AGENTPOST_IMAP_PORT = '0';
  if (!args.includes('--submission-port') && env.AGENTPOST_SUBMISSION_PORT === undefined) out.AGENTPOST_SUBMISSION_PORT = '0';
  if (!args.includes('--imap-tls-port') && env.AGENTPOST_IMAP_TLS_PORT === undefined) out.AGENTPOST_IMAP_TLS_PORT = '0';
  if (!args.includes('--submission-tls-port') && env.AGENTPOST_SUBMISSION_TLS_PORT === undefined) out.AGENTPOST_SUBMISSION_TLS_PORT = '0';
  return out;
};

interface ListeningLine {
  http: number;
  smtp: number;
  imap: number;
  baseUrl: string;
}

const findListeningLine = (stderr: string): ListeningLine | undefined => {
  for (const line of stderr.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const entry = JSON.parse(line) as { message?: string } & ListeningLine;
      if (entry.message === 'agentpost listening') return entry;
    } catch {
      // a partial line: the rest arrives with the next chunk
    }
  }
  return undefined;
};

const collect = (child: ChildProcess): (() => { stdout: string; stderr: string }) => {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return () => ({ stdout, stderr });
};

/** fetch against a server in another process, each response checked against the OpenAPI document. */
export const restCall = async (baseUrl: string, method: string, path: string, options: { key?: string; body?: unknown } = {}) => {
  const headers: Record<string, string> = {};
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(baseUrl + path, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await response.text();
  const body: any = text === '' ? undefined : JSON.parse(text);
  assertMatchesOpenApi(method, path, response.status, body);
  return { status: response.status, body };
};
