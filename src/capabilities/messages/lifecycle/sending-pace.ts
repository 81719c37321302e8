import type { SendingPaceStore } from "../ports.ts";
import type { PacePort } from "./ports.ts";

/**
 * The sending pace: a token bucket per provider, shared by every worker
 * (SendingPaceStore). `reserve` takes one token when there is one (answer 0)
 * or tells how long to wait for the next one; the workflow then sleeps
 * durably (a Temporal timer) and the message is visibly `deferred`.
 */
export interface PaceSettings {
  /** Messages per second the provider accepts. */
  readonly ratePerSecond: number;
  /** Messages that may go at once after a quiet period. */
  readonly burst: number;
}

export interface SendingPaceDependencies extends PaceSettings {
  readonly store: SendingPaceStore;
}

/** A slot of one email service's pace, for a company's message (fair between companies) or for anyone. */
export interface ReserveCommand {
  readonly provider: string;
  readonly companyId?: string | undefined;
  /**
   * `campaign`: a lower priority. A campaign copy takes a token only when
   * more than half the burst is there, so transactional mail always finds
   * the other half: a campaign sending as fast as the pace allows never
   * makes a receipt wait (docs/campaigns.md, "Transactional mail first").
   */
  readonly priority?: "transactional" | "campaign" | undefined;
}

export class SendingPace implements PacePort {
  readonly #store: SendingPaceStore;
  readonly #settings: PaceSettings;

  constructor(deps: SendingPaceDependencies) {
    if (!(deps.ratePerSecond > 0) || !(deps.burst >= 1)) throw new Error("sending pace: rate must be > 0 and burst >= 1");
    this.#store = deps.store;
    this.#settings = { ratePerSecond: deps.ratePerSecond, burst: deps.burst };
  }

  /**
   * Milliseconds to wait before trying again; 0 means a slot was taken.
   * With `companyId` the slots are shared fairly between companies: the
   * next token goes to the waiting company served least recently, so one
   * company's burst delays another company's message by at most about one
   * pace interval (1 / ratePerSecond), however many messages the burst holds.
   */
  async reserve(command: ReserveCommand): Promise<number> {
    const { ratePerSecond, burst } = this.#settings;
    const { available, needed = 1 } =
      command.priority === "campaign"
        ? await this.#store.take(command.provider, ratePerSecond, burst, undefined, campaignKeep(burst))
        : await this.#store.take(command.provider, ratePerSecond, burst, command.companyId);
    if (available >= needed) return 0;
    // The time until the bucket holds the tokens owed first and one for this caller.
    return Math.max(1, Math.ceil(((needed - available) / ratePerSecond) * 1000));
  }
}

/** The tokens a campaign copy leaves for transactional mail: half the burst, at least one (below a burst of 2, none can be kept). */
export function campaignKeep(burst: number): number {
  return burst >= 2 ? Math.max(1, Math.floor(burst / 2)) : 0;
}
