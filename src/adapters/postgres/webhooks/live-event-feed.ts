import pg from "pg";
import type { FeedEnd, LiveEventFeed, LiveEventListener, LiveSubscription, OutboxEvent } from "../../../capabilities/webhooks/ports.ts";
import { LIVE_EVENTS_CHANNEL } from "../entities/notify-channels.ts";
import { isUuid } from "../ids.ts";
import { type Pool, toDate } from "../sql.ts";

/**
 * The live event feed of one API process (LiveEventFeed): the webhook
 * outbox's events as they are committed, whichever process wrote them (the
 * API's sends and contacts, a worker's message moves, the intake of
 * delivery reports), to the streams this process holds.
 *
 * Across processes, through PostgreSQL: a statement trigger on
 * webhook_event (LIVE_EVENT_NOTICE_TRIGGER, entities/webhook-event.ts) NOTIFYs LIVE_EVENTS_CHANNEL on
 * commit with the company id and the ids of the events the statement
 * inserted, and the feed LISTENs on a connection of its own. PostgreSQL
 * delivers notices in commit order; for a company with a stream here, the
 * feed reads those rows back (`company_id = $1 and id = any($2)`: tenant
 * filtered, never a payload taken for data) and hands them on in that
 * order. Nothing is polled, and a process without a stream holds no
 * connection: the feed connects at the first subscription and disconnects
 * after the last.
 *
 * The places of a company (at most N streams at once, over every process)
 * are session advisory locks on that same connection, one key per company
 * and place: taken with pg_try_advisory_lock, given back on close, and
 * released by PostgreSQL itself when the process or its connection dies,
 * so a crashed process never keeps a place. A lost connection ends every
 * stream of the process as `interrupted` (notices may have been missed,
 * and its places are gone); the clients open new ones.
 */
export { LIVE_EVENTS_CHANNEL };

/** The connection's application_name, as pg_stat_activity shows it. */
export const LIVE_EVENTS_FEED_APPLICATION_NAME = "mail-webhook-live";

/** The advisory lock key of one place of a company (int8, from the text as in the stores' other locks). */
const PLACE_KEY = `hashtextextended('webhook_stream:' || $1::text || ':' || $2::text, 0)`;

interface Connection {
  readonly client: pg.Client;
  /** The statements on the connection, one after the other (pg leaves ordering to its caller). */
  queue: Promise<unknown>;
  /** Places held on this connection, per company: a session lock is re-entrant, so a place held here is never taken twice. */
  readonly held: Map<string, Set<number>>;
  lost: boolean;
}

interface Subscriber {
  readonly companyId: string;
  readonly place: number;
  readonly listener: LiveEventListener;
  readonly connection: Connection;
  done: boolean;
}

interface EventRow {
  id: string;
  event: string;
  occurred_at: string | Date;
  data: Record<string, unknown>;
}

export interface LiveEventFeedOptions {
  readonly db: () => Promise<Pool>;
  readonly log: { warn(details: Record<string, unknown>, message: string): void };
}

export class PostgresLiveEventFeed implements LiveEventFeed {
  readonly #db: () => Promise<Pool>;
  readonly #log: LiveEventFeedOptions["log"];
  #connecting: Promise<Connection> | undefined;
  /** The connection in use, once connected. */
  #current: Connection | undefined;
  /** Subscribers, and subscriptions under way: the connection is closed when none is left. */
  #users = 0;
  readonly #subscribers = new Map<string, Set<Subscriber>>();
  #closed = false;
  /** Notices not read yet, in the order they came (commit order). */
  #notices: { companyId: string; ids: string[] }[] = [];
  #draining: Promise<void> | undefined;

  constructor(options: LiveEventFeedOptions) {
    this.#db = options.db;
    this.#log = options.log;
  }

  async subscribe(companyId: string, places: number, listener: LiveEventListener): Promise<LiveSubscription | "full" | "closed"> {
    if (this.#closed) return "closed";
    this.#users++;
    let subscriber: Subscriber | undefined;
    try {
      const connection = await this.#connection();
      const place = await this.#claim(connection, companyId, places);
      if (place === undefined) return "full";
      const taken: Subscriber = { companyId, place, listener, connection, done: false };
      subscriber = taken;
      const ofCompany = this.#subscribers.get(companyId) ?? new Set<Subscriber>();
      this.#subscribers.set(companyId, ofCompany);
      ofCompany.add(taken);
      if (this.#closed) {
        this.#end(taken);
        return "closed";
      }
      // Lost while the place was being taken: the place went with it.
      if (connection.lost) this.#end(taken, "interrupted");
      return { close: async () => this.#end(taken) };
    } catch (error) {
      // Shutting down under a subscription: its connection was closed beneath it.
      if (this.#closed) return "closed";
      throw error;
    } finally {
      if (!subscriber) this.#leave();
    }
  }

  /** Ends every subscription (`shutdown`) and disconnects; later subscriptions answer `closed`. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const ofCompany of [...this.#subscribers.values()]) for (const subscriber of [...ofCompany]) this.#end(subscriber, "shutdown");
    const connecting = this.#connecting;
    this.#connecting = undefined;
    this.#current = undefined;
    const connection = await connecting?.catch(() => undefined);
    if (connection) await disconnect(connection);
    await this.#draining;
  }

  #connection(): Promise<Connection> {
    if (this.#connecting) return this.#connecting;
    const connecting: Promise<Connection> = this.#connect()
      .then((connection) => {
        if (connection.lost) throw new Error("the live event feed's connection ended while it was opened");
        if (this.#connecting === connecting) this.#current = connection;
        return connection;
      })
      .catch((error: unknown) => {
        if (this.#connecting === connecting) this.#connecting = undefined;
        throw error;
      });
    this.#connecting = connecting;
    return connecting;
  }

  async #connect(): Promise<Connection> {
    // The pool's own settings (host, credentials, TLS, timeouts); pg keeps the password out of a spread.
    const settings = (await this.#db()).options;
    const client = new pg.Client({ ...settings, password: settings.password, application_name: LIVE_EVENTS_FEED_APPLICATION_NAME });
    const connection: Connection = { client, queue: Promise.resolve(), held: new Map(), lost: false };
    client.on("notification", (message) => {
      if (message.channel === LIVE_EVENTS_CHANNEL && message.payload) this.#heard(message.payload);
    });
    client.on("error", (error) => this.#lost(connection, error));
    client.on("end", () => this.#lost(connection, new Error("the live event feed's connection ended")));
    try {
      await client.connect();
      await client.query(`listen ${LIVE_EVENTS_CHANNEL}`);
    } catch (error) {
      await disconnect(connection);
      throw error;
    }
    return connection;
  }

  /** The first free place of the company, taken; undefined when every one is held (here or elsewhere). */
  async #claim(connection: Connection, companyId: string, places: number): Promise<number | undefined> {
    const held = connection.held.get(companyId) ?? new Set<number>();
    connection.held.set(companyId, held);
    for (let place = 0; place < places; place++) {
      if (held.has(place)) continue;
      held.add(place);
      const { rows } = await inTurn(connection, () => connection.client.query<{ taken: boolean }>(`select pg_try_advisory_lock(${PLACE_KEY}) as taken`, [companyId, place]));
      if (rows[0]?.taken) return place;
      held.delete(place);
    }
    return undefined;
  }

  /** Ends one subscription (told `reason` when the feed ends it) and gives its place back. */
  #end(subscriber: Subscriber, reason?: FeedEnd): void {
    if (subscriber.done) return;
    subscriber.done = true;
    const ofCompany = this.#subscribers.get(subscriber.companyId);
    ofCompany?.delete(subscriber);
    if (ofCompany?.size === 0) this.#subscribers.delete(subscriber.companyId);
    if (reason) subscriber.listener.ended(reason);
    const { connection, companyId, place } = subscriber;
    connection.held.get(companyId)?.delete(place);
    // Unlocked in order with later claims on the same connection; a disconnect releases every place anyway.
    if (!connection.lost && this.#users > 1) {
      inTurn(connection, () => connection.client.query(`select pg_advisory_unlock(${PLACE_KEY})`, [companyId, place])).catch(() => {});
    }
    this.#leave();
  }

  /** One user fewer; the last one disconnects. */
  #leave(): void {
    this.#users--;
    if (this.#users > 0) return;
    const connecting = this.#connecting;
    this.#connecting = undefined;
    this.#current = undefined;
    void connecting?.then(disconnect, () => {});
  }

  /** The connection failed or ended: its streams end as interrupted (notices may have been missed, its places are gone). */
  #lost(connection: Connection, error: unknown): void {
    if (connection.lost) return;
    void disconnect(connection);
    if (this.#current !== connection) return;
    this.#current = undefined;
    this.#connecting = undefined;
    this.#log.warn({ err: error }, "live event feed: connection lost; its streams end as interrupted");
    for (const ofCompany of [...this.#subscribers.values()]) {
      for (const subscriber of [...ofCompany]) if (subscriber.connection === connection) this.#end(subscriber, "interrupted");
    }
  }

  /** A notice: `<company id> <event id> <event id> ...`, kept for reading when the company has a stream here. */
  #heard(payload: string): void {
    const [companyId = "", ...ids] = payload.split(" ");
    if (!this.#subscribers.has(companyId) || !isUuid(companyId)) return;
    const known = ids.filter(isUuid);
    if (known.length === 0) return;
    this.#notices.push({ companyId, ids: known });
    this.#draining ??= this.#drain().finally(() => {
      this.#draining = undefined;
    });
  }

  /** Reads what the notices name, a company at a time, and hands it on in notice order. */
  async #drain(): Promise<void> {
    while (this.#notices.length > 0) {
      const byCompany = new Map<string, string[]>();
      for (const { companyId, ids } of this.#notices.splice(0)) byCompany.set(companyId, [...(byCompany.get(companyId) ?? []), ...ids]);
      for (const [companyId, ids] of byCompany) {
        if (!this.#subscribers.has(companyId)) continue;
        let events: OutboxEvent[];
        try {
          events = await this.#read(companyId, ids);
        } catch (error) {
          this.#log.warn({ err: error, companyId }, "live event feed: events could not be read; the company's streams end as interrupted");
          for (const subscriber of [...(this.#subscribers.get(companyId) ?? [])]) this.#end(subscriber, "interrupted");
          continue;
        }
        if (events.length === 0) continue;
        for (const subscriber of [...(this.#subscribers.get(companyId) ?? [])]) subscriber.listener.events(events);
      }
    }
  }

  async #read(companyId: string, ids: readonly string[]): Promise<OutboxEvent[]> {
    const { rows } = await (await this.#db()).query<EventRow>(
      `select id, event, occurred_at, data from webhook_event where company_id = $1 and id = any($2::uuid[])`,
      [companyId, ids],
    );
    const order = new Map(ids.map((id, index) => [id, index]));
    return rows
      .map((row) => ({ id: row.id, event: row.event, occurredAt: toDate(row.occurred_at), data: row.data }))
      .sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0));
  }
}

/** Runs `statement` on the connection after the ones before it. */
function inTurn<T>(connection: Connection, statement: () => Promise<T>): Promise<T> {
  const result = connection.queue.then(statement);
  connection.queue = result.catch(() => undefined);
  return result;
}

async function disconnect(connection: Connection): Promise<void> {
  connection.lost = true;
  const { client } = connection;
  client.removeAllListeners();
  client.on("error", () => {});
  await client.end().catch(() => {});
}
