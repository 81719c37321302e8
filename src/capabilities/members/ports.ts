import type { AuditNote } from "../audit/types.ts";
import type { KeysetPosition } from "../shared/keyset-cursor.ts";
import type { Positioned } from "../shared/paging.ts";
import type { MemberRecord, MemberRole, SessionRecord } from "./types.ts";

export type { AuditNote } from "../audit/types.ts";

export interface NewMember {
  readonly email: string;
  readonly displayName: string;
  readonly role: MemberRole;
}

export interface MemberPatch {
  readonly role?: MemberRole;
  readonly disabled?: boolean;
  readonly displayName?: string;
}

/**
 * Members, sign-in links and sessions. TENANT ISOLATION: every method on a
 * company's rows takes its id first; another company's member is not
 * found. The exceptions are the presented secrets (a link's token, a
 * session's cookie): their hash is what tells the company. Every change
 * writes its audit row in the same transaction.
 */
export interface MembersStore {
  /** Oldest first, strictly after `after` when given; at most `limit` rows. */
  list(companyId: string, after: KeysetPosition | null, limit: number): Promise<Positioned<MemberRecord>[]>;
  find(companyId: string, memberId: string): Promise<MemberRecord | null>;
  findByEmail(companyId: string, email: string): Promise<MemberRecord | null>;
  /**
   * Adds a member (with its audit row), or finds the one with that email
   * unchanged. Answers whether it was created.
   */
  insertOrFind(companyId: string, member: NewMember, audit: AuditNote): Promise<{ member: MemberRecord; created: boolean }>;
  /**
   * Changes a member under a lock of the company's active owners; `decide`
   * sees the member and the number of active owners and answers the patch
   * (or throws, writing nothing). Disabling ends every session. Null: no such member.
   */
  update(companyId: string, memberId: string, decide: (current: MemberRecord, activeOwners: number) => MemberPatch, audit: AuditNote): Promise<MemberRecord | null>;
  /** Removes a member (sessions and links go with it), after `check` under the same lock. */
  remove(companyId: string, memberId: string, check: (current: MemberRecord, activeOwners: number) => void, audit: AuditNote): Promise<MemberRecord | null>;
  /** Ends every session of a member, after `check` under the lock of update and remove; null when there is no such member. */
  endSessions(companyId: string, memberId: string, check: (current: MemberRecord) => void, audit: AuditNote): Promise<number | null>;
  /** Stores a new link (its token's hash) for a member; the audit row when given. */
  createLink(companyId: string, memberId: string, link: { tokenHash: Buffer; expiresAt: Date }, audit: AuditNote | undefined): Promise<void>;
  /** Takes the member's one-email-per-minute slot: true when no link was emailed to them since `notBefore`. */
  claimEmailSlot(companyId: string, memberId: string, now: Date, notBefore: Date): Promise<boolean>;
  /**
   * In one transaction: uses the link (unused, unexpired, member enabled),
   * creates the session, records the sign-in. Null when the link is not usable.
   */
  exchangeLink(linkHash: Buffer, now: Date, session: { secretHash: Buffer; expiresAt: Date }): Promise<SessionRecord | null>;
  /**
   * A live session (unexpired, seen within `idleMs`, member enabled), marked
   * seen at `now` when its last mark is older than `touchAfterMs`. Null otherwise.
   */
  findSession(secretHash: Buffer, now: Date, idleMs: number, touchAfterMs: number): Promise<SessionRecord | null>;
  deleteSession(secretHash: Buffer): Promise<void>;
  /** Deletes ended sessions and links past their time (housekeeping). */
  deleteExpired(now: Date, idleMs: number): Promise<number>;
}

/** Sends a sign-in email through the service's own send path (the system sender). */
export interface SignInMailer {
  send(mail: { to: string; companyName: string; url: string; expiresAt: Date; idempotencyKey: string }): Promise<void>;
}
