import { AppError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { ParseMail } from '../../core/parsed-message.js';
import type { MessageStructure, StoredBody, StoredContent } from '../../core/stored-message.js';
import type { Store } from '../../store/index.js';

/**
 * The stored bodies of messages (src/core/stored-message.ts): what a read and an IMAP FETCH
 * answer from. Ingest stores a message with its body; a message without one (stored before
 * bodies existed, or composed here) gets it built through the injected parse (the parse
 * threads, under their budget), either by the backfill worker or by the first read that
 * needs it. Nothing here parses received content on the calling thread.
 */
export class MessageBodyService {
  /** Bodies being built, so concurrent reads of one message parse it once. */
  private readonly building = new Map<number, Promise<StoredBody>>();

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
    private readonly parse: ParseMail,
  ) {}

  /** What a REST or MCP read of the message answers. */
  async content(rowId: number): Promise<StoredContent> {
    return (await this.store.bodies.content(rowId)) ?? (await this.build(rowId)).content;
  }

  /** The MIME tree and ENVELOPE an IMAP FETCH answers BODYSTRUCTURE, BODY and ENVELOPE from. */
  async structure(rowId: number): Promise<MessageStructure> {
    return (await this.store.bodies.structure(rowId)) ?? (await this.build(rowId)).structure;
  }

  async hasBackfill(): Promise<boolean> {
    return await this.store.bodies.hasBackfill();
  }

  /**
   * Builds the bodies of up to `limit` listed messages, one at a time so the parse workers
   * stay free for arriving mail. Returns how many were built; one that fails stays listed.
   */
  async backfill(limit: number, stopping: () => boolean = () => false): Promise<number> {
    let built = 0;
    for (const rowId of await this.store.bodies.backfillIds(limit)) {
      if (stopping()) break;
      try {
        if (await this.store.bodies.content(rowId)) await this.store.groupCommit(() => this.store.bodies.dropFromBackfill(rowId));
        else await this.build(rowId);
        built += 1;
      } catch (error) {
        this.logger.warn('could not build a stored body; it stays listed', { rowId, error: error instanceof Error ? error.message : String(error) });
      }
    }
    return built;
  }

  private build(rowId: number): Promise<StoredBody> {
    let pending = this.building.get(rowId);
    if (!pending) {
      pending = this.buildNow(rowId).finally(() => this.building.delete(rowId));
      this.building.set(rowId, pending);
    }
    return pending;
  }

  private async buildNow(rowId: number): Promise<StoredBody> {
    const raw = await this.store.messageRaw.bytes(rowId);
    if (!raw) {
      await this.store.groupCommit(() => this.store.bodies.dropFromBackfill(rowId));
      throw new AppError('not_found', 'the message is gone');
    }
    const { body } = await this.parse(raw);
    if (!body) throw new Error('the parse returned no stored body');
    await this.store.groupCommit(async () => {
      await this.store.bodies.insert(rowId, body);
      await this.store.bodies.setWireSize(rowId, body.structure.size);
    });
    if (body.content.fallback) this.logger.info('message body built from the bounded fallback', { rowId, reason: body.content.fallback });
    return body;
  }
}
