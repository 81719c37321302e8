import { ApiError } from "../../contract/api-error.ts";
import type { RateLimiter } from "../rate-limit/types.ts";
import type { MembersStore } from "./ports.ts";
import { isWellFormedToken, newToken, tokenHash } from "./tokens.ts";
import type { SessionRecord } from "./types.ts";

/** A session ends 30 minutes after its last call ... */
export const SESSION_IDLE_MS = 30 * 60_000;
/** ... and 12 hours after sign-in at the latest. */
export const SESSION_ABSOLUTE_MS = 12 * 3_600_000;
/** "Last seen" is written at most once a minute per session (a read per call, not a write). */
const TOUCH_AFTER_MS = 60_000;
/** Link exchanges per client address per minute. */
const EXCHANGES_PER_ADDRESS_PER_MINUTE = 10;

export interface SessionsDependencies {
  readonly store: MembersStore;
  readonly rateLimiter: RateLimiter;
  readonly clock: () => Date;
}

export interface ExchangeSignInLinkCommand {
  readonly token: string;
  /** The client's address, for the per-address budget. */
  readonly clientAddress: string;
}

export interface SignOutCommand {
  /** The session cookie's value; a malformed or unknown one ends nothing. */
  readonly secret: string;
}

export interface ExchangeSignInLinkResult {
  /** The cookie value of the new session: shown to the browser once, only its hash is stored. */
  readonly secret: string;
  readonly session: SessionRecord;
}

/**
 * Sign-in by one-time link and the sessions it opens. `authenticate` is the
 * auth step's lookup of a cookie (the transport's SessionAuthenticator),
 * `purgeExpired` the hourly housekeeping; the others are use cases.
 */
export class Sessions {
  readonly #o: SessionsDependencies;

  constructor(dependencies: SessionsDependencies) {
    this.#o = dependencies;
  }

  /**
   * Uses a link once and opens a new session (a new id at every sign-in: no
   * fixation). Unknown, used and expired links get one answer.
   */
  async exchange(command: ExchangeSignInLinkCommand): Promise<ExchangeSignInLinkResult> {
    const budget = await this.#o.rateLimiter.consume({ bucket: `sign-in-exchange:${command.clientAddress}`, limitPerMinute: EXCHANGES_PER_ADDRESS_PER_MINUTE });
    if (!budget.allowed) {
      throw new ApiError("RATE_LIMITED", `Too many sign-in attempts from this address. Retry after ${budget.retryAfterSeconds} s.`, {
        "retry-after": String(budget.retryAfterSeconds),
      });
    }
    const invalid = new ApiError("SIGN_IN_LINK_INVALID", "This sign-in link is not valid (unknown, already used or expired). Ask for a new one.");
    if (!isWellFormedToken(command.token)) throw invalid;
    const now = this.#o.clock();
    const secret = newToken();
    const session = await this.#o.store.exchangeLink(tokenHash(command.token), now, {
      secretHash: tokenHash(secret),
      expiresAt: new Date(now.getTime() + SESSION_ABSOLUTE_MS),
    });
    if (!session) throw invalid;
    return { secret, session };
  }

  /** The live session behind a cookie value; undefined when there is none. */
  async authenticate(secret: string): Promise<SessionRecord | undefined> {
    if (!isWellFormedToken(secret)) return undefined;
    const session = await this.#o.store.findSession(tokenHash(secret), this.#o.clock(), SESSION_IDLE_MS, TOUCH_AFTER_MS);
    return session ?? undefined;
  }

  async signOut(command: SignOutCommand): Promise<void> {
    if (isWellFormedToken(command.secret)) await this.#o.store.deleteSession(tokenHash(command.secret));
  }

  /** Housekeeping: ended sessions and old links. */
  purgeExpired(): Promise<number> {
    return this.#o.store.deleteExpired(this.#o.clock(), SESSION_IDLE_MS);
  }
}
