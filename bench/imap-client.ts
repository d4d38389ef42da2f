import { readdirSync, readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { cpuMs, cpuMsWithReaped } from './proc.js';

/**
 * The IMAP client of bench:imap: a raw socket, so both servers get the same bytes and the
 * client does no parsing while a command is timed. An answer is complete when its tagged
 * status line ends what has arrived (one command in flight, or the last of a pipelined run).
 */
export class BenchImap {
  private chunks: Buffer[] = [];
  private tail = '';
  private waiter: (() => void) | null = null;
  private next = 0;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.chunks.push(chunk);
      // Only the chunk's end becomes text: a string of every 64 KB chunk was garbage enough
      // (19 MB a round) to set off this process's collector inside timed commands.
      this.tail = (this.tail + chunk.subarray(-1024).toString('latin1')).slice(-1024);
      this.waiter?.();
    });
  }

  static async open(port: number): Promise<BenchImap> {
    const socket = connect(port, '127.0.0.1');
    socket.setNoDelay(true);
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const client = new BenchImap(socket);
    await client.until(/^\* OK[^\r\n]*\r\n$/m);
    client.take();
    return client;
  }

  /** A fresh tag for a command the caller writes itself (pipelined runs). */
  tag(): string {
    this.next += 1;
    return `b${this.next}`;
  }

  write(data: string | Buffer): void {
    this.socket.write(data);
  }

  /** Resolves once the answer tagged `tag` has arrived; returns everything received since the last take. */
  async answer(tag: string): Promise<Buffer> {
    await this.until(new RegExp(`(?:^|\\r\\n)${tag} (?:OK|NO|BAD)[^\\r\\n]*\\r\\n$`));
    const out = this.take();
    const status = `\r\n${out.subarray(-4096).toString('latin1')}`.trimEnd().split('\r\n').at(-1) ?? '';
    if (!status.startsWith(`${tag} OK`)) throw new Error(`IMAP: ${status}`);
    return out;
  }

  /** One command, its whole answer. */
  async command(text: string): Promise<Buffer> {
    const tag = this.tag();
    this.write(`${tag} ${text}\r\n`);
    return this.answer(tag);
  }

  close(): void {
    this.socket.destroy();
  }

  private until(pattern: RegExp): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`IMAP: no answer matching ${pattern} in 10 minutes`)), 600_000);
      const check = () => {
        if (!pattern.test(this.tail)) return;
        clearTimeout(timer);
        this.waiter = null;
        resolve();
      };
      this.waiter = check;
      check();
    });
  }

  private take(): Buffer {
    const out = Buffer.concat(this.chunks);
    this.chunks = [];
    this.tail = '';
    return out;
  }
}

/** How many untagged FETCH responses an answer holds (counted after the timing stops). */
export const fetchCount = (answer: Buffer): number => answer.toString('latin1').match(/^\* \d+ FETCH \(/gm)?.length ?? 0;

/** MESSAGES of a STATUS answer (RFC 3501 section 7.2.4), or -1 if it has none. */
export const statusMessages = (answer: Buffer): number => Number(/^\* STATUS .*\(.*MESSAGES (\d+)/m.exec(answer.toString('latin1'))?.[1] ?? -1);

/** The numbers of a SEARCH answer. */
export const searchHits = (answer: Buffer): number =>
  /^\* SEARCH([ \d]*)\r$/m.exec(answer.toString('latin1'))?.[1].trim().split(' ').filter(Boolean).length ?? 0;

/** A process and every process below it (Dovecot runs one per session, plus its services). */
const processTree = (root: number): number[] => {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const tree = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, parent] of parents) if (tree.has(parent) && !tree.has(pid)) grew = tree.add(pid).size > 0;
  }
  return [...tree];
};

/** Sum of `read` over a process tree; a process gone meanwhile counts 0. */
const sumOver = (root: number, read: (pid: number) => number): { total: number; processes: number } => {
  const tree = processTree(root);
  let total = 0;
  for (const pid of tree) {
    try {
      total += read(pid);
    } catch {
      // gone meanwhile
    }
  }
  return { total, processes: tree.length };
};

/** Resident memory of a process tree, in MB. */
export const treeRssMb = (root: number): { mb: number; processes: number } => {
  const { total, processes } = sumOver(root, (pid) => Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024);
  return { mb: total, processes };
};

/** User plus system CPU of a process tree (all threads), in ms: what a command cost the server whatever the machine's load. */
export const treeCpuMs = (root: number): number => sumOver(root, cpuMs).total;

/** treeCpuMs counting the processes that have ended too (reaped by one still in the tree): a burst's worth of short-lived workers. */
export const treeCpuMsWithReaped = (root: number): number => sumOver(root, cpuMsWithReaped).total;
