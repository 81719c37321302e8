import pg from "pg";
import type { Pool } from "./sql.ts";

/**
 * Hears, through PostgreSQL LISTEN, committed changes that a cache in this
 * process depends on: triggers NOTIFY a channel on commit, whoever wrote
 * the change (this process, another API process, an operator's SQL), and
 * every listening process hears it. The channels:
 * accounts/credential-changes.ts (API keys and companies),
 * sending-setup/sender-changes.ts (senders and sending domains) and
 * webhooks/webhook-work-feed.ts (work for the webhook outbox relay, which
 * wakes on it rather than empties a cache).
 *
 * One dedicated connection per feed (a pooled one would be handed to
 * queries). When it is lost, `listening(false)` is said at once and it
 * reconnects with a growing pause; `listening(true)` only once LISTEN is in
 * place again, so a change made meanwhile is never missed by a caller that
 * trusts the feed only while it listens.
 */
export interface ChangeFeedHandlers {
  /** Something changed: forget what was read before. */
  changed(): void;
  /** Whether changes are being heard now. */
  listening(on: boolean): void;
  /** A lost connection or a failed reconnection (the feed keeps trying). */
  onError?(error: unknown): void;
}

export interface ChangeFeed {
  close(): Promise<void>;
}

const FIRST_RETRY_MS = 500;
const LONGEST_RETRY_MS = 30_000;

/** Hears the NOTIFYs of `channel`, on a connection named `applicationName` (pg_stat_activity). */
export function listenForChanges(pool: () => Promise<Pool>, channel: string, handlers: ChangeFeedHandlers, applicationName: string): ChangeFeed {
  let closed = false;
  let client: pg.Client | undefined;
  let retryMs = FIRST_RETRY_MS;
  let retry: NodeJS.Timeout | undefined;
  let connecting: Promise<void> | undefined;

  /** The connection `dead` is gone (an error and its end both say so: acted on once). */
  const lost = (dead: pg.Client, error: unknown) => {
    if (client !== dead) return;
    client = undefined;
    handlers.listening(false);
    dead.removeAllListeners();
    dead.on("error", () => {});
    void dead.end().catch(() => {});
    if (closed) return;
    void pool().then(
      (current) => {
        // The pool was closed (its owner shut down without closing the feed): so is the feed.
        if (current.ending || current.ended) {
          closed = true;
          return;
        }
        handlers.onError?.(error);
        retry = setTimeout(() => void connect(), retryMs);
        retry.unref();
        retryMs = Math.min(LONGEST_RETRY_MS, retryMs * 2);
      },
      () => {
        closed = true;
      },
    );
  };

  const connect = (): Promise<void> =>
    (connecting = (async () => {
      let fresh: pg.Client | undefined;
      try {
        // The pool's own settings (host, credentials, TLS, timeouts), named for operators (pg_stat_activity).
        // pg keeps the password a non-enumerable property of the options (out of logs): a spread alone drops it.
        const settings = (await pool()).options;
        fresh = new pg.Client({ ...settings, password: settings.password, application_name: applicationName });
        const current = fresh;
        client = current;
        current.on("error", (error) => lost(current, error));
        current.on("end", () => lost(current, new Error(`the ${channel} feed's connection ended`)));
        current.on("notification", (message) => {
          if (message.channel === channel) handlers.changed();
        });
        await current.connect();
        await current.query(`listen ${channel}`);
        if (closed || client !== current) return;
        retryMs = FIRST_RETRY_MS;
        // Anything read before LISTEN was in place may be out of date.
        handlers.changed();
        handlers.listening(true);
      } catch (error) {
        if (fresh && !closed) lost(fresh, error);
        else if (!closed) {
          closed = true;
          handlers.onError?.(error);
        }
      }
    })());

  void connect();

  return {
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      await connecting;
      handlers.listening(false);
      const last = client;
      client = undefined;
      last?.removeAllListeners();
      last?.on("error", () => {});
      await last?.end().catch(() => {});
    },
  };
}
