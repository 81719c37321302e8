import { createHash } from "node:crypto";
import type { OwnerDirectory, SystemMailer } from "./ports.ts";

/** What a notice is about; its name is part of the notice's key and of the email's `kind` tag. */
export type OwnerNoticeKind = "domain_degraded" | "credits_low" | "sending_suspended";

/**
 * A notice to a company's owners: why it is sent, in a few plain
 * paragraphs, and where in the screen to act. `period` names the window in
 * which the same notice is sent once (default: the UTC day of `at`), so a
 * condition that holds all day emails each owner once that day.
 */
export interface NotifyOwnersCommand {
  readonly companyId: string;
  readonly companyName: string;
  readonly kind: OwnerNoticeKind;
  readonly subject: string;
  readonly paragraphs: readonly string[];
  /** A page of the administration screen, e.g. `/admin/domains`. */
  readonly screenPath?: string;
  readonly at: Date;
  readonly period?: string;
}

export interface NotifyOwnersResult {
  /** Owners emailed by this call (0 when each already had this notice in this period, or nobody can send it). */
  readonly emailed: number;
  /** Why nothing could be sent: no system sender configured, or no active owner. */
  readonly skipped?: "no_system_sender" | "no_owner";
}

export interface OwnerNoticesDependencies {
  readonly owners: OwnerDirectory;
  /** The system sender's mailer; absent when SYSTEM_SENDER_COMPANY_ID is not set. */
  readonly mailer: SystemMailer | undefined;
  /** Base of the screen's links (PUBLIC_BASE_URL). */
  readonly publicBaseUrl: string;
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The service's own mail to a company's owners: a domain that lost its
 * records, credits running low, sending suspended. Each goes as system mail
 * (sealed at rest, its content withheld from every read), once per owner,
 * notice and period: the email's idempotency key names all three, so
 * retries and repeated triggers send nothing new.
 */
export class OwnerNotices {
  readonly #deps: OwnerNoticesDependencies;

  constructor(deps: OwnerNoticesDependencies) {
    this.#deps = deps;
  }

  async notify(command: NotifyOwnersCommand): Promise<NotifyOwnersResult> {
    const mailer = this.#deps.mailer;
    if (!mailer) return { emailed: 0, skipped: "no_system_sender" };
    const owners = await this.#deps.owners.activeOwners({ companyId: command.companyId });
    if (owners.length === 0) return { emailed: 0, skipped: "no_owner" };
    const period = command.period ?? command.at.toISOString().slice(0, 10);
    const link = command.screenPath ? `${this.#deps.publicBaseUrl}${command.screenPath}` : undefined;
    const company = command.companyName || "your company";
    const text = [...command.paragraphs, ...(link ? [`Open the administration screen: ${link}`] : []), `(${company})`].join("\n\n") + "\n";
    const html =
      command.paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join("") +
      (link ? `<p><a href="${escapeHtml(link)}">Open the administration screen</a></p>` : "") +
      `<p>${escapeHtml(company)}</p>`;
    let emailed = 0;
    // One owner's failed send does not keep the others from hearing: some notices are sent once per
    // change of state, never again. The first failure is thrown after every owner was tried; a retry
    // reaches the owners it names, the others' keys replay.
    const failures: unknown[] = [];
    for (const owner of owners) {
      try {
        const sent = await mailer.send({
          to: owner,
          subject: command.subject,
          html,
          text,
          idempotencyKey: noticeKey(command.companyId, command.kind, period, owner),
          tags: { kind: "owner-notice", notice: command.kind },
        });
        if (!sent.replayed) emailed += 1;
      } catch (error: unknown) {
        failures.push(error);
      }
    }
    if (failures.length > 0) throw failures[0];
    return { emailed };
  }
}

/** One key per company, notice, period and owner (the owner by a hash: the key is kept with the message). */
function noticeKey(companyId: string, kind: OwnerNoticeKind, period: string, owner: string): string {
  const who = createHash("sha256").update(owner).digest("hex").slice(0, 16);
  return `owner-notice:${kind}:${companyId}:${period}:${who}`;
}
