import { ApiError, ValidationError } from "../../contract/api-error.ts";
import { isEmailAddress } from "../messages/compose/email-address.ts";
import type { RateLimiter } from "../rate-limit/types.ts";
import type { AuditContext } from "../audit/types.ts";
import { KeysetPager, UNFILTERED, type Page, type PageRequest } from "../shared/paging.ts";
import type { AuditNote, MemberPatch, MembersStore, SignInMailer } from "./ports.ts";
import { newToken, tokenHash } from "./tokens.ts";
import { isMemberRole, type MemberRecord, type MemberRole } from "./types.ts";

/** A sign-in link is valid 15 minutes. */
export const SIGN_IN_LINK_TTL_MS = 15 * 60_000;
/** At most one sign-in email per address per minute. */
const EMAIL_INTERVAL_MS = 60_000;
/** Links minted per address per minute, whoever asks (invites, operators). */
const LINKS_PER_ADDRESS_PER_MINUTE = 5;
const MAX_EMAIL = 254;
const MAX_DISPLAY_NAME = 200;

/**
 * Who is acting: the audit context, and the member's role (undefined for an
 * operator, who may do everything an owner may). API keys never reach the
 * members use cases (the contract refuses them: refuse_api_keys).
 */
export interface Acting {
  readonly audit: AuditContext;
  readonly role: MemberRole | undefined;
}

export interface MembersDependencies {
  readonly store: MembersStore;
  /** Signs the member list's cursors (CURSOR_SECRET). */
  readonly cursorSecret: string;
  readonly rateLimiter: RateLimiter;
  readonly clock: () => Date;
  /** Base of the sign-in links: `{base}/admin/sign-in#token=...`. */
  readonly publicBaseUrl: string;
  /** The system sender's mailer; without it links are handed to the caller. */
  readonly mailer?: SignInMailer | undefined;
  /** The company's name, for the email. */
  readonly companyName: (companyId: string) => Promise<string | undefined>;
}

export interface InviteMemberCommand {
  readonly companyId: string;
  readonly email: string;
  readonly displayName?: string | undefined;
  readonly role?: MemberRole | undefined;
  readonly acting: Acting;
}

export interface InviteMemberResult {
  readonly member: MemberRecord;
  /** Empty when the link was emailed. */
  readonly signInUrl: string;
  readonly emailed: boolean;
  readonly expiresAt: Date;
}

/** A page of the company's members, oldest first. */
export interface ListMembersCommand extends PageRequest {
  readonly companyId: string;
}

export type ListMembersResult = Page<MemberRecord>;

export interface GetMemberCommand {
  readonly companyId: string;
  readonly memberId: string;
}

export interface SignInLinkCommand {
  readonly companyId: string;
  readonly email: string;
  readonly acting: Acting;
}

export interface SignInLinkResult {
  readonly member: MemberRecord;
  readonly signInUrl: string;
  readonly expiresAt: Date;
}

export interface UpdateMemberCommand {
  readonly companyId: string;
  readonly memberId: string;
  readonly role?: MemberRole | undefined;
  readonly disabled?: boolean | undefined;
  readonly displayName?: string | undefined;
  readonly acting: Acting;
}

export interface MemberCommand {
  readonly companyId: string;
  readonly memberId: string;
  readonly acting: Acting;
}

/** Company members and their sign-in links. */
export class Members {
  readonly #o: MembersDependencies;
  readonly #pager: KeysetPager;

  constructor(dependencies: MembersDependencies) {
    this.#o = dependencies;
    this.#pager = new KeysetPager(dependencies.cursorSecret, { context: "mail.v1.members.cursor.v1", label: "member list", filters: "parameters" });
  }

  list(command: ListMembersCommand): Promise<ListMembersResult> {
    return this.#pager.read(command.companyId, UNFILTERED, command, (after, limit) => this.#o.store.list(command.companyId, after, limit));
  }

  async get(command: GetMemberCommand): Promise<MemberRecord> {
    const member = await this.#o.store.find(command.companyId, command.memberId);
    if (!member) throw noSuchMember();
    return member;
  }

  /**
   * Invites a new member with a role the inviter may grant (only owners
   * invite owners), and mints their first link: emailed by the system sender
   * when there is one, else answered for the inviter to hand over (the audit
   * row says which). A sign-in link to an existing member's account never
   * reaches anyone but that member's address: with a system sender they are
   * emailed a new link and the answer carries none; without one the invite
   * answers 409 MEMBER_ALREADY_EXISTS. A member invited earlier who has never
   * signed in is invited again with their role, if the inviter may grant it.
   */
  async invite(command: InviteMemberCommand): Promise<InviteMemberResult> {
    const email = validEmail(command.email);
    const role = command.role ?? "member";
    if (!isMemberRole(role)) throw new ValidationError([{ field: "role", problem: "must be owner, admin or member" }]);
    if (role === "owner") requireOwner(command.acting, "invite an owner");
    const displayName = validDisplayName(command.displayName);
    const linkShown = this.#o.mailer === undefined;
    const { member, created } = await this.#o.store.insertOrFind(
      command.companyId,
      { email, displayName, role },
      note(command.acting, "member.invited", { email, role, linkShown }),
    );
    if (created) return this.#mint(command.companyId, member, undefined, true);
    if (member.disabled) throw new ValidationError([{ field: "email", problem: "the member is disabled; enable them first" }]);
    if (member.lastSignInAt === null && mayGrant(command.acting, member.role)) {
      const again = note(command.acting, "member.invited", { email, role: member.role, linkShown, again: true });
      return this.#mint(command.companyId, member, again, true);
    }
    if (this.#o.mailer) {
      return this.#mint(command.companyId, member, note(command.acting, "member.sign_in_link_emailed", { email }), true);
    }
    throw new ApiError("MEMBER_ALREADY_EXISTS", "This address already belongs to a member: they sign in with a link sent to it, or an operator creates one.");
  }

  /** Operators: a sign-in link for an existing member, answered (never emailed). */
  async createSignInLink(command: SignInLinkCommand): Promise<SignInLinkResult> {
    const email = validEmail(command.email);
    const member = await this.#o.store.findByEmail(command.companyId, email);
    if (!member) throw new ApiError("NOT_FOUND", "No such member.");
    if (member.disabled) throw new ValidationError([{ field: "email", problem: "the member is disabled; enable them first" }]);
    const minted = await this.#mint(command.companyId, member, note(command.acting, "member.sign_in_link_created", { email }), false);
    return { member, signInUrl: minted.signInUrl, expiresAt: minted.expiresAt };
  }

  async update(command: UpdateMemberCommand): Promise<MemberRecord> {
    if (command.role !== undefined && !isMemberRole(command.role)) {
      throw new ValidationError([{ field: "role", problem: "must be owner, admin or member" }]);
    }
    const displayName = command.displayName === undefined ? undefined : validDisplayName(command.displayName);
    const details: Record<string, string | boolean> = {};
    if (command.role !== undefined) details.role = command.role;
    if (command.disabled !== undefined) details.disabled = command.disabled;
    if (displayName !== undefined) details.displayName = displayName;
    const updated = await this.#o.store.update(
      command.companyId,
      command.memberId,
      (current, activeOwners) => {
        // Only an owner changes anything of an owner (role, name, enabled), or makes one.
        if (current.role === "owner") requireOwner(command.acting, "change an owner");
        const patch: { role?: MemberRole; disabled?: boolean; displayName?: string } = {};
        if (command.role !== undefined && command.role !== current.role) {
          if (command.role === "owner") requireOwner(command.acting, "make owners");
          patch.role = command.role;
        }
        if (command.disabled !== undefined && command.disabled !== current.disabled) patch.disabled = command.disabled;
        if (displayName !== undefined) patch.displayName = displayName;
        const stopsOwning = current.role === "owner" && !current.disabled && (patch.role !== undefined || patch.disabled === true);
        if (stopsOwning && activeOwners <= 1) throw lastOwner();
        return patch satisfies MemberPatch;
      },
      note(command.acting, "member.updated", details),
    );
    if (!updated) throw noSuchMember();
    return updated;
  }

  async remove(command: MemberCommand): Promise<MemberRecord> {
    const removed = await this.#o.store.remove(
      command.companyId,
      command.memberId,
      (current, activeOwners) => {
        if (current.role === "owner") requireOwner(command.acting, "remove an owner");
        if (current.role === "owner" && !current.disabled && activeOwners <= 1) throw lastOwner();
      },
      note(command.acting, "member.removed", {}),
    );
    if (!removed) throw noSuchMember();
    return removed;
  }

  async endSessions(command: MemberCommand): Promise<number> {
    const ended = await this.#o.store.endSessions(
      command.companyId,
      command.memberId,
      (current) => {
        if (current.role === "owner") requireOwner(command.acting, "end an owner's sessions");
      },
      note(command.acting, "member.sessions_ended", {}),
    );
    if (ended === null) throw noSuchMember();
    return ended;
  }

  /** A new link for `member`; emailed when `mayEmail` and a system sender exists. */
  async #mint(companyId: string, member: MemberRecord, audit: AuditNote | undefined, mayEmail: boolean): Promise<InviteMemberResult> {
    // Invites (by members and operators) are budgeted per address; the links an operator asks for by hand are not.
    const budget = mayEmail
      ? await this.#o.rateLimiter.consume({ bucket: `sign-in-link:${companyId}:${member.email}`, limitPerMinute: LINKS_PER_ADDRESS_PER_MINUTE })
      : { allowed: true, retryAfterSeconds: 0 };
    if (!budget.allowed) {
      throw new ApiError("RATE_LIMITED", `Too many sign-in links for this address. Retry after ${budget.retryAfterSeconds} s.`, {
        "retry-after": String(budget.retryAfterSeconds),
      });
    }
    const now = this.#o.clock();
    const token = newToken();
    const expiresAt = new Date(now.getTime() + SIGN_IN_LINK_TTL_MS);
    await this.#o.store.createLink(companyId, member.id, { tokenHash: tokenHash(token), expiresAt }, audit);
    const url = `${this.#o.publicBaseUrl}/admin/sign-in#token=${token}`;
    const mailer = this.#o.mailer;
    if (mayEmail && mailer) {
      const slot = await this.#o.store.claimEmailSlot(companyId, member.id, now, new Date(now.getTime() - EMAIL_INTERVAL_MS));
      if (!slot) {
        throw new ApiError("RATE_LIMITED", "A sign-in email went to this address less than a minute ago. Retry after 60 s.", { "retry-after": "60" });
      }
      const companyName = (await this.#o.companyName(companyId)) ?? "";
      // The idempotency key names the link by its hash's start, never the token.
      await mailer.send({ to: member.email, companyName, url, expiresAt, idempotencyKey: `sign-in-${tokenHash(token).toString("hex").slice(0, 32)}` });
      return { member, signInUrl: "", emailed: true, expiresAt };
    }
    return { member, signInUrl: url, emailed: false, expiresAt };
  }
}

function note(acting: Acting, action: AuditNote["action"], details: AuditNote["details"]): AuditNote {
  return { context: acting.audit, action, details };
}

/** Whether the actor may hand out `role`: an owner or an operator any role, others any but owner. */
function mayGrant(acting: Acting, role: MemberRole): boolean {
  return role !== "owner" || acting.role === undefined || acting.role === "owner";
}

function requireOwner(acting: Acting, what: string): void {
  if (acting.role !== undefined && acting.role !== "owner") throw new ApiError("FORBIDDEN", `Only an owner may ${what}.`);
}

function lastOwner(): ValidationError {
  return new ValidationError([{ field: "id", problem: "at least one owner must remain; make another member owner first" }]);
}

function noSuchMember(): ApiError {
  return new ApiError("NOT_FOUND", "No such member.");
}

function validEmail(value: string): string {
  const email = value.trim().toLowerCase();
  if (email.length === 0 || email.length > MAX_EMAIL || !isEmailAddress(email)) {
    throw new ValidationError([{ field: "email", problem: "must be an email address of at most 254 characters" }]);
  }
  return email;
}

function validDisplayName(value: string | undefined): string {
  const name = (value ?? "").trim();
  if ([...name].length > MAX_DISPLAY_NAME) throw new ValidationError([{ field: "displayName", problem: `must be at most ${MAX_DISPLAY_NAME} characters` }]);
  return name;
}
