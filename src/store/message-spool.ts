import { mkdirSync, rmSync } from 'node:fs';
import { open, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Spool, SpoolFile } from '../core/message-intake.js';

/**
 * The spool: received messages on their way in, in files of `<dataDir>/spool/` instead of
 * memory (src/core/message-intake.ts). Nothing in it was ever acknowledged: a file left by a
 * process that stopped is a transaction whose client had no answer and sends again, so the
 * folder is emptied when the server starts. Only `serve` opens it; the admin commands never do.
 */
export class MessageSpool implements Spool {
  private next = 0;

  constructor(readonly dir: string) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  async create(): Promise<SpoolFile> {
    this.next += 1;
    const path = join(this.dir, `${this.next}.eml`);
    return new MessageFile(path, await open(path, 'wx+', 0o600));
  }
}

class MessageFile implements SpoolFile {
  private size = 0;
  private handle: FileHandle | null;

  constructor(
    private readonly path: string,
    handle: FileHandle,
  ) {
    this.handle = handle;
  }

  async append(chunk: Buffer): Promise<void> {
    const handle = this.open();
    for (let done = 0; done < chunk.length; ) {
      const { bytesWritten } = await handle.write(chunk, done, chunk.length - done, this.size);
      done += bytesWritten;
      this.size += bytesWritten;
    }
  }

  async readInto(target: Buffer, offset: number): Promise<void> {
    const handle = this.open();
    for (let done = 0; done < this.size; ) {
      const { bytesRead } = await handle.read(target, offset + done, this.size - done, done);
      if (bytesRead === 0) throw new Error(`spool file ${this.path} ended after ${done} of ${this.size} bytes`);
      done += bytesRead;
    }
  }

  async remove(): Promise<void> {
    const handle = this.handle;
    if (!handle) return;
    this.handle = null;
    await handle.close().finally(() => rm(this.path, { force: true }));
  }

  private open(): FileHandle {
    if (!this.handle) throw new Error(`spool file ${this.path} was removed`);
    return this.handle;
  }
}
