import { ApiError, ValidationError } from "../../contract/api-error.ts";
import type { AuditContext } from "../audit/types.ts";
import { isUuid } from "../shared/uuid.ts";
import type { GuardLimits, SendingGuardStore, Suspension, SuspensionAlert, SuspensionNotice, SuspensionReason, WindowFigures } from "./ports.ts";

/** How far back a company's sends count. */
export const GUARD_WINDOW_MS = 24 * 3_600_000;
const MAX_REASON = 500;

export interface SendingGuardDependencies {
  readonly store: SendingGuardStore;
  readonly limits: GuardLimits;
  /** Tells the owners of a company just suspended; none: nobody is told. */
  readonly alert?: SuspensionAlert | undefined;
  readonly clock?: () => Date;
}

/** A bounce or a complaint of the company was recorded: judge its window again. */
export interface OutcomeRecordedCommand {
  readonly companyId: string;
}

export interface SendingStatusQuery {
  readonly companyId: string;
}

/** What the company (and its screen) reads: the suspension, the current window and the lines. */
export interface SendingStatus {
  readonly suspension: Suspension | undefined;
  /** The window as it stands now. */
  readonly window: WindowFigures & { readonly from: Date };
  readonly limits: GuardLimits;
  readonly liftedAt: Date | undefined;
}

/** An operator lifts a company's suspension, saying why. */
export interface LiftSuspensionCommand {
  readonly companyId: string;
  readonly reason: string;
  readonly audit: AuditContext;
}

export interface LiftSuspensionResult {
  /** False when the company was not suspended (nothing changed). */
  readonly lifted: boolean;
}

/** A percentage with one decimal's worth of care: 11 of 211 is 5.21. */
export function percentOf(part: number, whole: number): number {
  return whole === 0 ? 0 : (part * 100) / whole;
}

/**
 * The deliverability guard (docs/deliverability.md): a company whose sends
 * of the last 24 hours (at least `minSends` of them) bounced more than
 * `bouncePercent`, or drew complaints more than `complaintPercent`, has its
 * sending suspended: sends are still accepted, and each message fails at
 * its handoff with SENDING_SUSPENDED (credit returned). The owners are
 * emailed once per suspension. An operator lifts it; from then on only
 * sends handed over after the lift count.
 *
 * The window is judged when a bounce or a complaint is recorded (the only
 * moments a rate can rise), never on the send path: the handoff reads the
 * suspension with its message. Judgements of one company in this process
 * are coalesced: while one runs, the outcomes recorded meanwhile ask for
 * one more afterwards, so a burst of bounces costs at most two counts at a
 * time and the last one always sees every outcome.
 */
export class SendingGuard {
  readonly #deps: SendingGuardDependencies;
  readonly #now: () => Date;
  /** Company -> the judgement under way, and whether another was asked for meanwhile. */
  readonly #running = new Map<string, { again: boolean; done: Promise<void> }>();

  constructor(deps: SendingGuardDependencies) {
    this.#deps = deps;
    this.#now = deps.clock ?? (() => new Date());
  }

  get limits(): GuardLimits {
    return this.#deps.limits;
  }

  /** Judges the company's window once the outcome is recorded; suspends it when a rate passes its line. */
  outcomeRecorded(command: OutcomeRecordedCommand): Promise<void> {
    const { companyId } = command;
    const running = this.#running.get(companyId);
    if (running) {
      running.again = true;
      return running.done;
    }
    const entry = { again: false, done: Promise.resolve() };
    entry.done = (async () => {
      try {
        do {
          entry.again = false;
          await this.#judge(companyId);
        } while (entry.again);
      } finally {
        this.#running.delete(companyId);
      }
    })();
    this.#running.set(companyId, entry);
    return entry.done;
  }

  /** The company's suspension (if any), its window now and the lines. */
  async status(query: SendingStatusQuery): Promise<SendingStatus> {
    const { companyId } = query;
    const state = await this.#deps.store.state(companyId);
    const from = this.#windowFrom(state.liftedAt);
    const figures = await this.#deps.store.windowFigures(companyId, from);
    return { suspension: state.suspension, window: { ...figures, from }, limits: this.#deps.limits, liftedAt: state.liftedAt };
  }

  /** Lifts the suspension (audited); sends handed over before now no longer count. */
  async lift(command: LiftSuspensionCommand): Promise<LiftSuspensionResult> {
    const reason = typeof command.reason === "string" ? command.reason.trim() : "";
    if (reason === "") throw new ValidationError([{ field: "reason", problem: "must say why (it is kept in the audit log)" }]);
    if ([...reason].length > MAX_REASON) throw new ValidationError([{ field: "reason", problem: `must be at most ${MAX_REASON} characters` }]);
    if (!isUuid(command.companyId) || (await this.#deps.store.companyName(command.companyId)) === undefined) {
      throw new ApiError("NOT_FOUND", "No such company.");
    }
    const outcome = await this.#deps.store.lift(command.companyId, { at: this.#now(), reason, audit: command.audit });
    return { lifted: outcome === "lifted" };
  }

  #windowFrom(liftedAt: Date | undefined): Date {
    const dayAgo = this.#now().getTime() - GUARD_WINDOW_MS;
    return new Date(liftedAt ? Math.max(dayAgo, liftedAt.getTime()) : dayAgo);
  }

  async #judge(companyId: string): Promise<void> {
    const { store, limits } = this.#deps;
    const state = await store.state(companyId);
    if (state.suspension) return;
    const windowFrom = this.#windowFrom(state.liftedAt);
    const figures = await store.windowFigures(companyId, windowFrom);
    const reason = crossedLine(figures, limits);
    if (!reason) return;
    const suspension: Suspension = { ...figures, reason, suspendedAt: this.#now(), windowFrom };
    if (!(await store.suspend(companyId, suspension))) return;
    if (this.#deps.alert) {
      const notice: SuspensionNotice = { companyId, companyName: (await store.companyName(companyId)) ?? "", suspension, limits };
      await this.#deps.alert.sendingSuspended(notice);
    }
  }
}

/** Which line the window crossed, if any: the bounce rate is judged first. */
export function crossedLine(figures: WindowFigures, limits: GuardLimits): SuspensionReason | undefined {
  if (figures.sends < limits.minSends) return undefined;
  if (percentOf(figures.bounces, figures.sends) > limits.bouncePercent) return "bounce_rate";
  if (percentOf(figures.complaints, figures.sends) > limits.complaintPercent) return "complaint_rate";
  return undefined;
}

/** Two decimals at most, no trailing zeros: 5.21, 0.3, 12. */
export function formatPercent(value: number): string {
  return String(Math.round(value * 100) / 100);
}

/** The owners' email: what happened, with the numbers, and what to do. */
export function suspensionEmail(notice: SuspensionNotice): { readonly subject: string; readonly paragraphs: readonly string[]; readonly screenPath: string } {
  const { suspension: s, limits } = notice;
  const company = notice.companyName || "your company";
  const bounceRate = formatPercent(percentOf(s.bounces, s.sends));
  const complaintRate = formatPercent(percentOf(s.complaints, s.sends));
  const why =
    s.reason === "bounce_rate"
      ? `${s.bounces} of the last ${s.sends} emails of ${company} bounced: ${bounceRate} %, above the limit of ${formatPercent(limits.bouncePercent)} %.`
      : `The recipients of ${s.complaints} of the last ${s.sends} emails of ${company} reported them as spam: ${complaintRate} %, above the limit of ${formatPercent(limits.complaintPercent)} %.`;
  return {
    subject: s.reason === "bounce_rate" ? `Sending is suspended: ${bounceRate} % of your emails bounced` : `Sending is suspended: ${complaintRate} % of your emails drew complaints`,
    paragraphs: [
      why,
      `Sending for ${company} is suspended to protect its sending reputation. New sends are still accepted, but each message fails with SENDING_SUSPENDED and its credit is returned.`,
      "Check where the addresses come from (old lists, typing mistakes, sign-ups without confirmation), then ask your Mail provider to lift the suspension. Only emails sent after that count again.",
    ],
    screenPath: "/admin/suppressions",
  };
}
