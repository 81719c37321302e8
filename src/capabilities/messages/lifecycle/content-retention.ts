/**
 * The content retention: a message's HTML, text and attachments are kept
 * MESSAGE_CONTENT_RETENTION_DAYS after it was accepted, then deleted. The
 * message itself (recipient, subject, status, events, tags) stays in the
 * log, marked as having had its content removed, so the message page says
 * so. A message not yet handed over keeps its content whatever its age:
 * its handoff needs it.
 */
export interface ContentRetentionStore {
  /**
   * Deletes the content of up to `limit` messages accepted before `before`
   * and past their handoff, oldest first, each in one step with its mark;
   * answers how many.
   */
  removeContentBefore(before: Date, limit: number): Promise<number>;
}

export interface MessageContentRetentionDependencies {
  readonly store: ContentRetentionStore;
  readonly retentionDays: number;
  readonly clock?: () => Date;
}

export interface RemoveExpiredContentCommand {
  /** The moment the retention is counted from; default now. */
  readonly now?: Date;
}

/** Messages per statement: short transactions, and rows locked briefly. */
const BATCH = 500;
/** Batches per run at most: a backlog is worked off over several runs, each of bounded length. */
const MAX_BATCHES = 200;

export class MessageContentRetention {
  readonly #deps: MessageContentRetentionDependencies;

  constructor(deps: MessageContentRetentionDependencies) {
    this.#deps = deps;
  }

  /** Deletes the content of the messages past the retention; answers how many messages lost theirs. */
  async removeExpired(command: RemoveExpiredContentCommand = {}): Promise<{ readonly removed: number }> {
    const now = command.now ?? this.#deps.clock?.() ?? new Date();
    const before = new Date(now.getTime() - this.#deps.retentionDays * 86_400_000);
    let removed = 0;
    for (let batch = 0; batch < MAX_BATCHES; batch++) {
      const count = await this.#deps.store.removeContentBefore(before, BATCH);
      removed += count;
      if (count < BATCH) break;
    }
    return { removed };
  }
}
