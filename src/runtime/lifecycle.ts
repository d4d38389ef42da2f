import type { Logger } from '../core/logger.js';

/** One part of the running service: what it does at start, and what undoes it at stop. */
export interface Part {
  name: string;
  start?(): unknown;
  stop?(): unknown;
}

/**
 * The one owner of start and stop order: parts start in the order they were added and stop
 * in the reverse order, so whatever a part uses is up before it and still up while it stops
 * (the store opens first and closes last; the listeners open last and close first, so no new
 * work arrives while the queues finish theirs). A part that fails to start stops the parts
 * started before it, and the failure is thrown. `stop` runs once, however often it is called.
 */
export class Lifecycle {
  private readonly parts: Part[] = [];
  private started: Part[] = [];
  private stopping: Promise<void> | null = null;

  constructor(private readonly logger: Logger) {}

  add(...parts: Part[]): this {
    this.parts.push(...parts);
    return this;
  }

  /** Parts already running when built (the store is open once constructed): nothing to start, stopped last. */
  own(...parts: Part[]): this {
    this.started.push(...parts);
    return this;
  }

  async start(): Promise<void> {
    for (const part of this.parts) {
      if (this.stopping) return;
      try {
        await part.start?.();
      } catch (error) {
        this.logger.error('start failed', { part: part.name, error: error instanceof Error ? error.message : String(error) });
        await this.stop();
        throw error;
      }
      this.started.push(part);
    }
  }

  stop(): Promise<void> {
    this.stopping ??= this.stopAll();
    return this.stopping;
  }

  /** Every started part, newest first; one that fails to stop is logged and the rest still stop. */
  private async stopAll(): Promise<void> {
    const started = this.started.reverse();
    this.started = [];
    for (const part of started) {
      try {
        await part.stop?.();
      } catch (error) {
        this.logger.error('stop failed', { part: part.name, error: error instanceof Error ? error.message : String(error) });
      }
    }
  }
}
