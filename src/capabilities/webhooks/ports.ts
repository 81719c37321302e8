/**
 * What the webhooks capability needs from storage. The PostgreSQL
 * implementations live in src/adapters/postgres/webhooks/.
 *
 * TENANT ISOLATION: every method on tenant rows takes the caller's
 * `companyId` first; a row of another company is simply not found. The
 * outbox methods (fan-out, the relay's work lists) span companies: they run
 * in the service's own processes, never on a caller's behalf.
 */
import type { AuditNote } from "../audit/types.ts";
import type { Positioned } from "../shared/paging.ts";
import type { KeysetPosition } from "../shared/keyset-cursor.ts";
import type { RecordedErrorClass } from "./delivery-attempt.ts";
import type { DeliveryState } from "./delivery-states.ts";

// ---------------------------------------------------------------- endpoints

/** An endpoint as stored. The secrets are sealed (AES-256-GCM); unseal only to sign. */
export interface EndpointRecord {
  readonly id: string;
  readonly companyId: string;
  readonly url: string;
  readonly description: string | null;
  readonly events: readonly string[];
  readonly enabled: boolean;
  readonly secretSealed: string;
  readonly previousSecretSealed: string | null;
  readonly previousSecretExpiresAt: Date | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export interface EndpointDraft {
  /** Chosen before the row exists: the sealed secret is bound to it. */
  readonly id: string;
  readonly url: string;
  readonly description: string | null;
  readonly events: readonly string[];
  readonly enabled: boolean;
  readonly secretSealed: string;
}

export interface EndpointChanges {
  readonly url?: string;
  readonly description?: string | null;
  readonly events?: readonly string[];
  readonly enabled?: boolean;
}

export interface SecretRotation {
  readonly secretSealed: string;
  readonly previousSecretSealed: string;
  readonly previousSecretExpiresAt: Date;
}

/**
 * Judges a create or a URL change against the company's other endpoints,
 * as they are under a per-company lock (two concurrent creates cannot both
 * take the last place); throws to refuse, and nothing is written.
 */
export type EndpointAdmission = (others: readonly EndpointRecord[]) => void;

export interface WebhookEndpointStore {
  /** With `audit`, the change's audit row is written in the same transaction (so for update, rotateSecret, delete). */
  create(companyId: string, draft: EndpointDraft, admit?: EndpointAdmission, audit?: AuditNote): Promise<EndpointRecord>;
  /** Null when it does not exist *for that company* (ids that cannot be row ids included). */
  find(companyId: string, endpointId: string): Promise<EndpointRecord | null>;
  /** The company's endpoints, oldest first. */
  list(companyId: string): Promise<EndpointRecord[]>;
  /** Applies the given changes (others untouched) and bumps updatedAt; null when not found. */
  update(companyId: string, endpointId: string, changes: EndpointChanges, admit?: EndpointAdmission, audit?: AuditNote): Promise<EndpointRecord | null>;
  /**
   * Replaces the secret, deciding the rotation from the endpoint as it is
   * under a row lock (two concurrent rotations cannot both keep "the
   * previous" secret). Null when not found.
   */
  rotateSecret(companyId: string, endpointId: string, plan: (current: EndpointRecord) => SecretRotation, audit?: AuditNote): Promise<EndpointRecord | null>;
  /** Deletes it with its deliveries and attempts; false when not found. */
  delete(companyId: string, endpointId: string, audit?: AuditNote): Promise<boolean>;
}

// ---------------------------------------------------------------- deliveries

export interface DeliveryRecord {
  readonly id: string;
  readonly companyId: string;
  readonly endpointId: string;
  readonly eventId: string;
  readonly event: string;
  readonly occurredAt: Date;
  readonly state: DeliveryState;
  readonly attemptCount: number;
  readonly lastStatus: number | null;
  readonly lastError: string | null;
  readonly lastAttemptAt: Date | null;
  readonly nextAttemptAt: Date | null;
  readonly createdAt: Date;
}

export interface AttemptRecord {
  readonly number: number;
  readonly attemptedAt: Date;
  readonly durationMs: number;
  readonly status: number | null;
  readonly errorClass: RecordedErrorClass | null;
}

export interface DeliveryFilters {
  readonly endpointId?: string;
  readonly state?: DeliveryState;
  readonly event?: string;
  /** Created at or after. */
  readonly since?: Date;
  /** Created before. */
  readonly until?: Date;
  /** Only deliveries of events whose data names this message (`messageId`). */
  readonly messageId?: string;
}

/** An endpoint's attempts since a time (its health). */
export interface EndpointHealthCounts {
  /** Deliveries with at least one attempt since then. */
  readonly deliveries: number;
  /** Of those, the ones with a 2xx attempt since then. */
  readonly succeeded: number;
  readonly attempts: number;
  /** Attempts without a 2xx. */
  readonly failedAttempts: number;
}

/** Everything one attempt needs, read in one go. */
export interface DeliveryToAttempt {
  readonly delivery: DeliveryRecord;
  readonly endpoint: EndpointRecord;
  /** The event's `data` object, as recorded in the outbox. */
  readonly data: Readonly<Record<string, unknown>>;
}

/** What an attempt changes on its delivery. */
export interface AttemptResultChange {
  readonly state: DeliveryState;
  readonly nextAttemptAt: Date | null;
}

export interface WebhookDeliveryStore {
  find(companyId: string, deliveryId: string): Promise<DeliveryRecord | null>;
  /** Newest first, `limit` rows after `after`, filtered; each with its position (created_at to the microsecond, id). */
  list(companyId: string, filters: DeliveryFilters, after: KeysetPosition | null, limit: number): Promise<Positioned<DeliveryRecord>[]>;
  /** Every attempt, oldest first. */
  attempts(companyId: string, deliveryId: string): Promise<AttemptRecord[]>;

  /** Delivery, endpoint and event data for an attempt; null when the delivery (or its endpoint) is gone. */
  loadForAttempt(companyId: string, deliveryId: string): Promise<DeliveryToAttempt | null>;
  /**
   * What an attempt reads before its post, in one round trip (every read
   * there delays the first attempt): loadForAttempt's
   * answer, and the attempt with that number if one was recorded (an
   * activity that ran before). Null when the delivery (or its endpoint) is gone.
   */
  loadAttempt(companyId: string, deliveryId: string, number: number): Promise<{ readonly loaded: DeliveryToAttempt; readonly earlier: AttemptRecord | null } | null>;
  /**
   * Records an attempt and moves the delivery, in one transaction. A second
   * record of the same number changes nothing. A succeeded delivery stays
   * succeeded. Answers the delivery afterwards; null when it is gone.
   */
  recordAttempt(companyId: string, deliveryId: string, attempt: AttemptRecord, change: AttemptResultChange): Promise<DeliveryRecord | null>;

  /**
   * Puts a dead letter back into `attempting` and marks it for the relay to
   * tell its workflow. Null when the delivery is not a dead letter (or not found).
   */
  /** With `audit`, its audit row is written by the same statement. */
  requestRetry(companyId: string, deliveryId: string, at: Date, audit?: AuditNote): Promise<DeliveryRecord | null>;
  /** The same for every dead letter of the endpoint created at or after `since`; answers how many. */
  requestRetryOfDeadLetters(companyId: string, endpointId: string, since: Date, at: Date, audit?: AuditNote): Promise<number>;
  /** How many dead letters of the endpoint were created at or after `since` (a dry run of the above). */
  countDeadLetters(companyId: string, endpointId: string, since: Date): Promise<number>;
  /** Attempt counts per endpoint since `since`; endpoints without attempts are absent. */
  healthOf(companyId: string, endpointIds: readonly string[], since: Date): Promise<Map<string, EndpointHealthCounts>>;
}

// ---------------------------------------------------------------- the outbox relay

/** A delivery whose workflow must be started (or told to retry). */
export interface DeliveryToDispatch {
  readonly id: string;
  readonly companyId: string;
  readonly endpointId: string;
  readonly event: string;
  readonly attemptCount: number;
  /** Set for a retry request: an opaque mark of that request, to clear once the workflow was told. */
  readonly retryRequest: string | null;
}

/**
 * The relay's side of storage: from the webhook_event outbox to deliveries
 * (fan-out), and from deliveries to workflows.
 */
export interface WebhookOutbox {
  /**
   * Takes up to `limit` events not yet fanned out (oldest first; rows other
   * relays hold are skipped), creates one delivery per enabled endpoint of
   * the event's company that subscribed to its kind and existed when the
   * event was recorded (unique per event and endpoint), and marks the events
   * fanned out, all in one transaction. Answers how many events it took.
   */
  fanOut(limit: number): Promise<number>;
  /** Deliveries whose workflow is not known to exist, created at least `minAgeMs` ago, oldest first. */
  unstarted(limit: number, minAgeMs: number): Promise<DeliveryToDispatch[]>;
  markWorkflowStarted(companyId: string, deliveryId: string): Promise<void>;
  /** Deliveries with a retry request not yet passed to their workflow. */
  retryRequests(limit: number): Promise<DeliveryToDispatch[]>;
  /** Clears the request if it is still the one passed on (a newer request stays). */
  clearRetryRequest(companyId: string, deliveryId: string, retryRequest: string): Promise<void>;
}

// ---------------------------------------------------------------- published events

/** An event another internal service published, ready for the outbox. */
export interface PublishedEventDraft {
  /** The publisher's stable id: recording is idempotent on it, per company. */
  readonly callerEventId: string;
  readonly event: string;
  readonly occurredAt: Date;
  /** The delivery body's `data`. */
  readonly data: Readonly<Record<string, unknown>>;
}

export type RecordedPublishedEvent =
  | { readonly kind: "recorded"; readonly id: string }
  /** The caller's id was recorded before with the same event. */
  | { readonly kind: "replayed"; readonly id: string }
  /** The caller's id was recorded before with another event. */
  | { readonly kind: "conflict"; readonly id: string }
  | { readonly kind: "no_company" };

/** Writes published events into the company's webhook outbox (webhook_event). */
export interface PublishedEventRecorder {
  record(companyId: string, draft: PublishedEventDraft): Promise<RecordedPublishedEvent>;
}

// ---------------------------------------------------------------- live events

/** An event of the webhook_event outbox, as a live stream carries it. */
export interface OutboxEvent {
  readonly id: string;
  readonly event: string;
  readonly occurredAt: Date;
  /** The delivery body's `data`. */
  readonly data: Readonly<Record<string, unknown>>;
}

/**
 * Why the feed ends a subscription: `shutdown` (the process is closing) or
 * `interrupted` (its feed of events was lost: events may have been missed).
 */
export type FeedEnd = "shutdown" | "interrupted";

/** What a subscription hears. Called in the feed's own turn: keep it short, never throw. */
export interface LiveEventListener {
  /** Events of the subscribed company, in the order they were committed. */
  events(events: readonly OutboxEvent[]): void;
  /** The feed has ended the subscription (its place is given back already); nothing follows. */
  ended(reason: FeedEnd): void;
}

export interface LiveSubscription {
  /** Gives the place back; nothing is heard afterwards. Idempotent. */
  close(): Promise<void>;
}

/**
 * A company's events as they are committed, whichever process recorded
 * them, to subscribers in this process. Each subscription holds one of the
 * company's `places`, counted over every process of the service; `full`
 * when all are taken, `closed` once the feed is shutting down.
 */
export interface LiveEventFeed {
  subscribe(companyId: string, places: number, listener: LiveEventListener): Promise<LiveSubscription | "full" | "closed">;
}

/** A test event for the outbox. */
export interface TestEventDraft {
  readonly event: string;
  readonly occurredAt: Date;
  readonly data: Readonly<Record<string, unknown>>;
}

/** Writes test events into the company's outbox (webhook_event). */
export interface TestEventRecorder {
  /**
   * Records the event under a new id. `toEndpoints` false: it is recorded as
   * fanned out already, so that only live streams see it; true: the relay
   * fans it out to the subscribed endpoints like any event. Null when the
   * company does not exist.
   */
  record(companyId: string, draft: TestEventDraft, toEndpoints: boolean): Promise<{ readonly id: string } | null>;
}
