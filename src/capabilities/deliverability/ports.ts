/**
 * What the sending guard needs from storage and from its neighbours. The
 * PostgreSQL store is src/adapters/postgres/deliverability/; the owners'
 * email goes through the owner notices (src/wiring/deliverability.ts).
 *
 * TENANT ISOLATION: every method takes the company id and reads or changes
 * that company's rows only.
 */
import type { AuditContext } from "../audit/types.ts";

export type SuspensionReason = "bounce_rate" | "complaint_rate";

/** A company's sends in a window, and how many of them bounced or drew a complaint. */
export interface WindowFigures {
  /** Messages handed over (accepted by the email service) in the window, but those it rejected later. */
  readonly sends: number;
  /** Of those, the ones that bounced. */
  readonly bounces: number;
  /** Of those, the ones whose recipient complained. */
  readonly complaints: number;
}

/** The suspension in force, with the figures that crossed the line. */
export interface Suspension extends WindowFigures {
  readonly suspendedAt: Date;
  readonly reason: SuspensionReason;
  /** Where the window began (24 hours before, or the last lift when later). */
  readonly windowFrom: Date;
}

/** A company's guard state: the suspension in force (if any) and when one was last lifted. */
export interface GuardState {
  readonly suspension: Suspension | undefined;
  readonly liftedAt: Date | undefined;
}

export interface SendingGuardStore {
  /** The company's state; no suspension and no lift when it never was suspended. */
  state(companyId: string): Promise<GuardState>;
  /** The company's sends handed over at or after `from`, and how they ended. */
  windowFigures(companyId: string, from: Date): Promise<WindowFigures>;
  /**
   * Suspends the company's sending, with its audit row (actor: the system),
   * unless it is suspended already, or was lifted after `windowFrom` (the
   * judgement counted sends the lift set aside): then nothing is written
   * and the answer is false.
   */
  suspend(companyId: string, suspension: Suspension): Promise<boolean>;
  /**
   * Lifts the suspension at `at` (sends handed over before it no longer
   * count), with the audit row, in one transaction. `not_suspended`:
   * nothing was written.
   */
  lift(companyId: string, lift: { readonly at: Date; readonly reason: string; readonly audit: AuditContext }): Promise<"lifted" | "not_suspended">;
  /** The company's name; undefined when there is no such company (or the id cannot be one). */
  companyName(companyId: string): Promise<string | undefined>;
}

/** Tells a company's owners that its sending was suspended (once per suspension). */
export interface SuspensionAlert {
  sendingSuspended(notice: SuspensionNotice): Promise<void>;
}

export interface SuspensionNotice {
  readonly companyId: string;
  readonly companyName: string;
  readonly suspension: Suspension;
  readonly limits: GuardLimits;
}

/** The lines the guard draws (SENDING_GUARD_*). */
export interface GuardLimits {
  /** Suspended when more than this percent of the window's sends bounced. */
  readonly bouncePercent: number;
  /** Suspended when more than this percent of the window's sends drew a complaint. */
  readonly complaintPercent: number;
  /** Judged only with at least this many sends in the window. */
  readonly minSends: number;
}
